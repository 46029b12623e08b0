package par

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueueOrderAndBounds(t *testing.T) {
	q := newQueue(3) // rounds up to 4 cells
	_, ok := q.pop()
	require.False(t, ok, "a new queue is empty")
	loops := make([]loop, 5)
	for lap := range 3 { // the cells are reused lap after lap
		for i := range 4 {
			require.True(t, q.push(job{&loops[i], uint32(lap)}), "lap %d push %d", lap, i)
		}
		require.False(t, q.push(job{&loops[4], 0}), "a full queue refuses a job")
		for i := range 4 {
			j, ok := q.pop()
			require.True(t, ok)
			require.Equal(t, job{&loops[i], uint32(lap)}, j, "first in, first out")
		}
		_, ok = q.pop()
		require.False(t, ok)
	}
}

// Every job pushed by concurrent producers is popped exactly once by concurrent consumers.
func TestQueueConcurrent(t *testing.T) {
	const producers, consumers, each = 4, 4, 5000
	q := newQueue(16)
	l := &loop{}
	seen := make([][]atomic.Int32, producers)
	for p := range seen {
		seen[p] = make([]atomic.Int32, each)
	}
	var done atomic.Bool
	var cons sync.WaitGroup
	for range consumers {
		cons.Go(func() {
			for {
				j, ok := q.pop()
				if !ok {
					if done.Load() {
						if j, ok = q.pop(); !ok {
							return
						}
					} else {
						continue
					}
				}
				seen[j.gen/each][j.gen%each].Add(1)
			}
		})
	}
	var prod sync.WaitGroup
	for p := range producers {
		prod.Go(func() {
			for i := range each {
				for !q.push(job{l, uint32(p*each + i)}) {
				}
			}
		})
	}
	prod.Wait()
	done.Store(true)
	cons.Wait()
	for p := range seen {
		for i := range seen[p] {
			require.EqualValues(t, 1, seen[p][i].Load(), "producer %d job %d", p, i)
		}
	}
}
