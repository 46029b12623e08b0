//go:build cuda

package cuda

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// fatbinFS holds the kernels' fatbins: Bazel's cuda_fatbins rule generates them beside this
// file (--config=cuda), and tools/cuda/kernels.sh does for `go build -tags cuda`.
//
//go:embed fatbin
var fatbinFS embed.FS

// fatbin is one embedded module: the fatbin of one csrc/*.cu file.
type fatbin struct {
	name  string // the .cu file's stem
	image []byte
}

// fatbins lists the embedded fatbins by name, or fails when the build embedded none.
func fatbins() ([]fatbin, error) {
	entries, err := fs.ReadDir(fatbinFS, "fatbin")
	if err != nil {
		return nil, err
	}
	var out []fatbin
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".fatbin") {
			continue
		}
		b, err := fatbinFS.ReadFile(path.Join("fatbin", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, fatbin{name: strings.TrimSuffix(e.Name(), ".fatbin"), image: b})
	}
	if len(out) == 0 {
		return nil, &NoKernelsError{}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
