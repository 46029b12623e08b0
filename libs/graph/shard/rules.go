package shard

// Heads is one rank's share of an attention's heads under the Megatron split: the query heads
// [Q0, Q0+Q) and the KV heads [KV0, KV0+KV). With at least as many KV heads as ranks each rank
// holds kv/ranks of them; with fewer, each holds one, replicated on ranks/kv ranks
// (KVReplicas), the one its query heads read: query head h reads KV head h / (heads/kv), so a
// rank's contiguous query heads read one contiguous run of KV heads in both cases.
type Heads struct {
	Q, Q0      int64
	KV, KV0    int64
	KVReplicas int64
}

// SplitHeads returns rank's share of heads query heads and kv KV heads over ranks. The ranks
// must divide heads, and kv and ranks must divide one another (a *DivisibilityError naming
// which does not); the estimator's --tp plans (carve.dev/libs/graph/arch's Config.Split) apply
// the same rule.
func SplitHeads(heads, kv int64, rank, ranks int) (Heads, error) {
	n, r := int64(ranks), int64(rank)
	switch {
	case ranks < 1 || rank < 0 || rank >= ranks:
		return Heads{}, &RankError{Rank: rank, Ranks: ranks}
	case heads%n != 0:
		return Heads{}, &DivisibilityError{What: "attention heads", Count: heads, Ranks: ranks}
	case kv < 1 || heads%kv != 0:
		return Heads{}, &DivisibilityError{What: "KV heads", Count: kv, Ranks: ranks}
	case kv >= n && kv%n != 0, kv < n && n%kv != 0:
		return Heads{}, &DivisibilityError{What: "KV heads", Count: kv, Ranks: ranks}
	}
	h := Heads{Q: heads / n, Q0: r * heads / n, KV: max(1, kv/n), KVReplicas: max(1, n/kv)}
	h.KV0 = r * kv / n // r*kv/n rounds down to the KV head a replicated rank's queries read
	return h, nil
}

// Columns returns rank's share [start, start+count) of n columns (or rows, or vocabulary
// entries) split evenly over ranks; a *DivisibilityError of what when ranks do not divide n.
func Columns(what string, n int64, rank, ranks int) (start, count int64, err error) {
	if ranks < 1 || rank < 0 || rank >= ranks {
		return 0, 0, &RankError{Rank: rank, Ranks: ranks}
	}
	if n%int64(ranks) != 0 {
		return 0, 0, &DivisibilityError{What: what, Count: n, Ranks: ranks}
	}
	count = n / int64(ranks)
	return int64(rank) * count, count, nil
}
