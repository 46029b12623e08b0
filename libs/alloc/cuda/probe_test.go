//go:build cuda

package cuda

import "testing"

// Runs on a GPU machine only: the binary is built with -tags cuda and carried there.
func TestProbe(t *testing.T) {
	infos, err := Probe()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		t.Fatal("no CUDA device")
	}
	for _, in := range infos {
		if in.TotalBytes <= 0 || in.FreeBytes <= 0 || in.FreeBytes > in.TotalBytes {
			t.Fatalf("implausible memory figures: %+v", in)
		}
		t.Logf("%+v", in)
	}
}
