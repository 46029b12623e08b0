package collective

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExchangeRendezvous: every rank's compute sees every rank's input of the same call, over
// many calls, and an abort releases the ranks that wait.
func TestExchangeRendezvous(t *testing.T) {
	const ranks, calls = 4, 200
	g, err := New(t.Name(), ranks)
	require.NoError(t, err)
	defer g.Close()
	_, err = New(t.Name(), 2)
	var ne *NameError
	require.ErrorAs(t, err, &ne)
	got, err := Lookup(t.Name())
	require.NoError(t, err)
	require.Same(t, g, got)
	var wg sync.WaitGroup
	errs := make([]error, ranks)
	for r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := []byte{0}
			for c := range calls {
				in[0] = byte(c*ranks + r)
				err := g.Exchange(r, in, func(posted [][]byte) error {
					for q, p := range posted {
						if p[0] != byte(c*ranks+q) {
							return errors.New("a rank saw another call's input")
						}
					}
					return nil
				})
				if err != nil {
					errs[r] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		var wg sync.WaitGroup
		wg.Add(ranks - 1)
		for r := 1; r < ranks; r++ {
			go func() { defer wg.Done(); g.Exchange(r, nil, func([][]byte) error { return nil }) }()
		}
		g.Exchange(0, nil, func([][]byte) error { return nil })
		wg.Wait()
	})
	require.LessOrEqual(t, allocs, float64(2*(ranks-1)+1), "the goroutines' own allocations only")

	done := make(chan error)
	go func() { done <- g.Exchange(1, nil, func([][]byte) error { return nil }) }()
	boom := errors.New("rank 0 failed")
	g.Abort(boom)
	require.ErrorIs(t, <-done, boom)
	require.ErrorIs(t, g.Exchange(0, nil, func([][]byte) error { return nil }), boom)
	require.NoError(t, g.Close())
	_, err = Lookup(t.Name())
	require.ErrorAs(t, err, &ne)
}
