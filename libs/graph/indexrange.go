package graph

// IndexRange returns how many rows the tables indexed by v have: the smallest extent, along
// the gathered axis, of the weights of the Gathers that use v as indices, directly or through
// views and Casts (at most 8 deep); 0 if v indexes no weight. It is how a caller making up
// inputs keeps token ids within the vocabulary.
func IndexRange(v *Value) int64 {
	var rows int64
	seen := map[*Value]bool{}
	var walk func(x *Value, depth int)
	walk = func(x *Value, depth int) {
		if seen[x] || depth > 8 {
			return
		}
		seen[x] = true
		for _, n := range x.Consumers {
			switch {
			case n.Domain == "" && n.OpType == "Gather" && n.Input(1) == x:
				data := n.Input(0)
				if data == nil || data.Init == nil {
					continue
				}
				rank := int64(len(data.Init.Shape))
				axis := n.Attrs.Int("axis", 0)
				if axis < 0 {
					axis += rank
				}
				if axis < 0 || axis >= rank {
					continue
				}
				if r := data.Init.Shape[axis]; r > 0 && (rows == 0 || r < rows) {
					rows = r
				}
			case n.IsView() && n.Input(0) == x, n.Domain == "" && n.OpType == "Cast":
				if o := n.Output(0); o != nil {
					walk(o, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return rows
}
