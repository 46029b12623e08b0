package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"carve.dev/libs/graph/testmodels"
)

// run runs the estimator with args (without the program name) and returns its outputs and
// exit code.
func run(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(append([]string{"estimator"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// fixture writes a testmodels fixture (with its external data) to a temporary directory.
func fixture(t testing.TB, name string) string {
	t.Helper()
	return testmodels.MustGet(name).WriteTemp(t)
}

// onnxModel builds a one-node ONNX model: op (in domain) maps input x, float32 [batch, 4], to
// output y. Enough to reach the loader's checks without a Python exporter.
func onnxModel(op, domain string) []byte {
	msg := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	sub := func(num protowire.Number, b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	// TypeProto.tensor_type{elem_type FLOAT, shape [batch, 4]}
	tensorType := sub(1, msg(varint(1, 1), sub(2, msg(sub(1, str(2, "batch")), sub(1, varint(1, 4))))))
	valueInfo := func(name string) []byte { return msg(str(1, name), sub(2, tensorType)) }
	node := msg(str(1, "x"), str(2, "y"), str(3, "the_node"), str(4, op), str(7, domain))
	graph := msg(sub(1, node), str(2, "g"), sub(11, valueInfo("x")), sub(12, valueInfo("y")))
	opsets := sub(8, msg(str(1, ""), varint(2, 18)))
	if domain != "" {
		opsets = append(opsets, sub(8, msg(str(1, domain), varint(2, 1)))...)
	}
	return msg(varint(1, 8), opsets, sub(7, graph))
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// oneLine checks that stderr is a single "estimator: ..." line and returns it.
func oneLine(t testing.TB, stderr string) string {
	t.Helper()
	require.True(t, strings.HasPrefix(stderr, "estimator: "), "stderr %q", stderr)
	require.Equal(t, 1, strings.Count(stderr, "\n"), "one line, got %q", stderr)
	require.True(t, strings.HasSuffix(stderr, "\n"))
	require.NotContains(t, stderr, "graph: ", "no library prefixes")
	require.NotContains(t, stderr, "goroutine", "no stacks")
	return strings.TrimSpace(stderr)
}
