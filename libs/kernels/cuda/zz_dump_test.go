package cuda

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestZZDumpLaunches(t *testing.T) {
	path := os.Getenv("DUMP")
	if path == "" {
		t.Skip()
	}
	reg, err := Registry()
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range allCases() {
		inst, err := reg.Select(&c.node, h200)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", c.name, err)
			continue
		}
		r := inst.Recipe()
		fmt.Fprintf(&b, "%s tactic=%s recipe=%+v\n", c.name, inst.Tactic(), r)
		for _, l := range fakeRun(t, &c.node, inst) {
			fmt.Fprintf(&b, "  %+v\n", l)
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}
