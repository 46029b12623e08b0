package shard

import "fmt"

// DivisibilityError reports a count the ranks do not divide: attention heads, KV heads (which
// need the ranks to be a multiple of them when there are fewer), the vocabulary, or a
// projection's columns.
type DivisibilityError struct {
	What  string // "attention heads", "KV heads", "vocabulary", "columns"
	Node  string // the node whose count it is
	Count int64
	Ranks int
}

func (e *DivisibilityError) Error() string {
	if e.What == "KV heads" && e.Count < int64(e.Ranks) {
		return fmt.Sprintf("shard: node %q: %d KV heads cannot be replicated over %d ranks (want ranks a multiple of them)", e.Node, e.Count, e.Ranks)
	}
	return fmt.Sprintf("shard: node %q: %d %s do not split over %d ranks", e.Node, e.Count, e.What, e.Ranks)
}

// UnsupportedError reports a graph the split rules do not cover: an op reading a value split
// among the ranks that has no rule, a split value reaching a graph output, a shape that
// cannot be rewritten for the rank.
type UnsupportedError struct {
	Node    string
	Op      string
	Problem string
}

func (e *UnsupportedError) Error() string {
	if e.Node == "" {
		return "shard: " + e.Problem
	}
	return fmt.Sprintf("shard: node %q (%s): %s", e.Node, e.Op, e.Problem)
}

// RankError reports a rank outside [0, ranks) or fewer than one rank.
type RankError struct{ Rank, Ranks int }

func (e *RankError) Error() string {
	return fmt.Sprintf("shard: rank %d of %d ranks: want 0 <= rank < ranks", e.Rank, e.Ranks)
}
