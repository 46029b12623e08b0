package engine

import (
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/kernels"
)

// FuseOptions are the fusions worth applying for a target: every kind whose fused op the
// target's kernels implement. A fusion into an op the backend lacks would make a model that
// cannot be planned, so it is skipped and the graph keeps the exported form there.
func FuseOptions(opts Options) (rewrite.Options, error) {
	opts, err := opts.normalized()
	if err != nil {
		return rewrite.Options{}, err
	}
	var fo rewrite.Options
	for _, k := range rewrite.Kinds() {
		if _, err := opts.Registry.Lookup(opts.Target.Backend, kernels.Key(k.Op())); err != nil {
			fo.Skip = append(fo.Skip, k)
		}
	}
	return fo, nil
}
