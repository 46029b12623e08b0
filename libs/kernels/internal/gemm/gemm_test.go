package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// naive is the reference: C = alpha * A * B (+ C), summed in float64.
func naive(m, n, k int, a Mat, b func(p, j int) float32, c []float32, ldc int, alpha float32, acc bool) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av float32
				if a.Trans {
					av = a.Data[p*a.Ld+i]
				} else {
					av = a.Data[i*a.Ld+p]
				}
				s += float64(av) * float64(b(p, j))
			}
			v := float32(float64(alpha) * s)
			if acc {
				v += c[i*ldc+j]
			}
			c[i*ldc+j] = v
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// transSource serves B's columns from a transposed matrix, as a dequantizing Source would.
type transSource struct{ m Mat }

func (s transSource) Col(dst []float32, j, k0 int) { copy(dst, s.m.Data[j*s.m.Ld+k0:]) }

func TestRunMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {1, 16, 3}, {7, 33, 64}, {6, 16, 256}, {13, 65, 300}, {12, 32, 0},
		{100, 17, 9}, {25, 1100, 70}, {200, 64, 40}, {3, 600, 513}}
	for _, kern := range Kernels() {
		for _, s := range shapes {
			for _, layout := range []Layout{RowMajor, Transposed, Custom} {
				for _, transA := range []bool{false, true} {
					for _, workers := range []int{1, 3} {
						m, n, k := s[0], s[1], s[2]
						name := fmt.Sprintf("%s/%dx%dx%d/layout%d/transA=%v/w%d", kern.Name, m, n, k, layout, transA, workers)
						t.Run(name, func(t *testing.T) {
							lda := k + 3
							a := Mat{Data: randSlice(r, m*lda), Ld: lda}
							if transA {
								a = Mat{Data: randSlice(r, k*(m+2)+1), Ld: m + 2, Trans: true}
							}
							var b Mat
							var src Source
							var at func(p, j int) float32
							if layout == RowMajor {
								b = Mat{Data: randSlice(r, k*(n+1)), Ld: n + 1}
								at = func(p, j int) float32 { return b.Data[p*b.Ld+j] }
							} else {
								bt := Mat{Data: randSlice(r, n*(k+5)), Ld: k + 5, Trans: true}
								b = bt
								at = func(p, j int) float32 { return bt.Data[j*bt.Ld+p] }
								if layout == Custom {
									src, b = transSource{b}, Mat{}
								}
							}
							ldc := n + 2
							c0 := randSlice(r, m*ldc)
							for _, acc := range []bool{false, true} {
								want := append([]float32(nil), c0...)
								got := append([]float32(nil), c0...)
								naive(m, n, k, a, at, want, ldc, 0.5, acc)
								p := NewPlan(m, n, k, layout, workers)
								ws := randSlice(r, p.WorkspaceFloats())
								require.LessOrEqual(t, int64(len(ws)), Workspace(int64(m), int64(n), int64(k), layout, workers))
								p.run(kern, a, b, src, tileOps{}, got, ldc, 0.5, acc, ws)
								for i := range want {
									require.InDelta(t, want[i], got[i], 1e-4*math.Max(1, math.Abs(float64(want[i]))), "element %d (acc %v)", i, acc)
								}
							}
						})
					}
				}
			}
		}
	}
}

// RunBias gives exactly C set to the bias rows and then Run with acc: the same sums in the
// same order, tile by tile, whatever the layout and workers; with K = 0 it sets C to the bias.
func TestRunBiasMatchesBiasThenRun(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{1, 16, 3}, {13, 65, 300}, {128, 768, 300}, {40, 1100, 70}, {5, 7, 0}} {
		for _, layout := range []Layout{RowMajor, Transposed} {
			for _, workers := range []int{1, 3, 12} {
				m, n, k := s[0], s[1], s[2]
				a := Mat{Data: randSlice(r, m*max(k, 1)), Ld: max(k, 1)}
				b := Mat{Data: randSlice(r, k*n+1), Ld: n}
				if layout == Transposed {
					b = Mat{Data: randSlice(r, n*max(k, 1)), Ld: max(k, 1), Trans: true}
				}
				bias := randSlice(r, n)
				ldc := n + 1
				want, got := randSlice(r, m*ldc), randSlice(r, m*ldc)
				p := NewPlan(m, n, k, layout, workers)
				ws := make([]float32, p.WorkspaceFloats())
				for i := 0; i < m; i++ {
					copy(want[i*ldc:i*ldc+n], bias)
				}
				p.Run(a, b, nil, want, ldc, 0.5, true, ws)
				p.RunBias(a, b, nil, bias, got, ldc, 0.5, ws)
				for i := 0; i < m; i++ {
					require.Equal(t, want[i*ldc:i*ldc+n], got[i*ldc:i*ldc+n], "%v layout %d workers %d row %d", s, layout, workers, i)
				}
			}
		}
	}
	p := NewPlan(2, 3, 1, RowMajor, 1)
	require.Panics(t, func() {
		p.RunBias(Mat{Data: make([]float32, 2), Ld: 1}, Mat{Data: make([]float32, 3), Ld: 3}, nil, make([]float32, 2), make([]float32, 6), 3, 1, nil)
	})
}

// RunRowBias gives exactly C's rows set to their bias and then Run with acc, whatever the
// layout, workers and swapping; with K = 0 it sets C to the bias.
func TestRunRowBiasMatchesBiasThenRun(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][3]int{{1, 16, 3}, {13, 65, 300}, {128, 768, 300}, {40, 1100, 70}, {64, 49, 600}, {5, 7, 0}} {
		for _, layout := range []Layout{RowMajor, Transposed} {
			for _, workers := range []int{1, 3, 12} {
				for _, swap := range []bool{false, true} {
					if swap && workers == 1 {
						continue
					}
					m, n, k := s[0], s[1], s[2]
					a := Mat{Data: randSlice(r, m*max(k, 1)), Ld: max(k, 1)}
					b := Mat{Data: randSlice(r, k*n+1), Ld: n}
					if layout == Transposed {
						b = Mat{Data: randSlice(r, n*max(k, 1)), Ld: max(k, 1), Trans: true}
					}
					bias := randSlice(r, m)
					ldc := n + 1
					want, got := randSlice(r, m*ldc), randSlice(r, m*ldc)
					p := newPlan(m, n, k, layout, workers, swap)
					ws := make([]float32, p.WorkspaceFloats())
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							want[i*ldc+j] = bias[i]
						}
					}
					p.Run(a, b, nil, want, ldc, 0.5, true, ws)
					p.RunRowBias(a, b, nil, bias, got, ldc, 0.5, ws)
					for i := 0; i < m; i++ {
						require.Equal(t, want[i*ldc:i*ldc+n], got[i*ldc:i*ldc+n], "%v layout %d workers %d swap %v row %d", s, layout, workers, swap, i)
					}
				}
			}
		}
	}
	p := NewPlan(2, 3, 1, RowMajor, 1)
	require.Panics(t, func() {
		p.RunRowBias(Mat{Data: make([]float32, 2), Ld: 1}, Mat{Data: make([]float32, 3), Ld: 3}, nil, make([]float32, 1), make([]float32, 6), 3, 1, nil)
	})
}

// RunEpilogue gives exactly C set to Add plus the row bias, Run with acc, then Relu over the
// whole of C, whatever the layout, workers and swapping, with K = 0 too.
func TestRunEpilogueMatchesThenEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{1, 16, 3}, {13, 65, 300}, {128, 768, 300}, {64, 49, 600}, {5, 7, 0}} {
		for _, layout := range []Layout{RowMajor, Transposed} {
			for _, workers := range []int{1, 3, 12} {
				for _, swap := range []bool{false, true} {
					if swap && workers == 1 {
						continue
					}
					for _, epi := range []struct{ add, relu, bias bool }{{true, true, true}, {false, true, false}, {true, false, true}, {true, true, false}} {
						m, n, k := s[0], s[1], s[2]
						a := Mat{Data: randSlice(r, m*max(k, 1)), Ld: max(k, 1)}
						b := Mat{Data: randSlice(r, k*n+1), Ld: n}
						if layout == Transposed {
							b = Mat{Data: randSlice(r, n*max(k, 1)), Ld: max(k, 1), Trans: true}
						}
						var bias []float32
						if epi.bias {
							bias = randSlice(r, m)
						}
						ldc := n + 1
						var e Epilogue
						if epi.add {
							e.Add = randSlice(r, m*ldc)
						}
						e.Relu = epi.relu
						want, got := randSlice(r, m*ldc), randSlice(r, m*ldc)
						p := newPlan(m, n, k, layout, workers, swap)
						ws := make([]float32, p.WorkspaceFloats())
						// the sums start from Add plus the row's bias, then Relu
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								switch {
								case e.Add != nil && bias != nil:
									want[i*ldc+j] = e.Add[i*ldc+j] + bias[i]
								case e.Add != nil:
									want[i*ldc+j] = e.Add[i*ldc+j]
								case bias != nil:
									want[i*ldc+j] = bias[i]
								}
							}
						}
						p.Run(a, b, nil, want, ldc, 0.5, e.Add != nil || bias != nil, ws)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								if e.Relu && want[i*ldc+j] < 0 {
									want[i*ldc+j] = 0
								}
							}
						}
						p.RunEpilogue(a, b, nil, bias, e, got, ldc, 0.5, ws)
						for i := 0; i < m; i++ {
							require.Equal(t, want[i*ldc:i*ldc+n], got[i*ldc:i*ldc+n], "%v layout %d workers %d swap %v %+v row %d", s, layout, workers, swap, epi, i)
						}
					}
				}
			}
		}
	}
	p := NewPlan(2, 3, 1, RowMajor, 1)
	require.Panics(t, func() {
		p.RunEpilogue(Mat{Data: make([]float32, 2), Ld: 1}, Mat{Data: make([]float32, 3), Ld: 3}, nil, nil, Epilogue{Add: make([]float32, 5)}, make([]float32, 6), 3, 1, nil)
	})
}

// Workspace never decreases as a shape grows (recipes sized at a range's largest shapes cover
// the range) and covers every plan.
func TestWorkspaceIsMonotone(t *testing.T) {
	dims := []int64{1, 5, 12, 13, 31, 32, 33, 64, 100, 255, 256, 257, 600, 1025, 3000}
	for _, layout := range []Layout{RowMajor, Transposed} {
		for _, w := range []int{1, 2, 16} {
			for _, m := range dims {
				for _, n := range dims {
					for _, k := range dims {
						ws := Workspace(m, n, k, layout, w)
						p := NewPlan(int(m), int(n), int(k), layout, w)
						require.LessOrEqual(t, int64(p.WorkspaceFloats()), ws, "%dx%dx%d", m, n, k)
						require.LessOrEqual(t, Workspace(m, n, k, layout, max(w-1, 1)), ws)
						for _, g := range [][3]int64{{m + 1, n, k}, {m, n + 1, k}, {m, n, k + 1}} {
							require.LessOrEqual(t, ws, Workspace(g[0], g[1], g[2], layout, w), "%v after %dx%dx%d", g, m, n, k)
						}
					}
				}
			}
		}
	}
	for _, w := range []int{1, 2, 16} { // and so does SwappedWorkspace, for NewSwappedPlan
		for _, m := range dims {
			for _, n := range dims {
				for _, k := range dims {
					ws := SwappedWorkspace(m, n, k, w)
					p := NewSwappedPlan(int(m), int(n), int(k), w)
					require.LessOrEqual(t, int64(p.WorkspaceFloats()), ws, "%dx%dx%d", m, n, k)
					require.LessOrEqual(t, SwappedWorkspace(m, n, k, max(w-1, 1)), ws)
					for _, g := range [][3]int64{{m + 1, n, k}, {m, n + 1, k}, {m, n, k + 1}} {
						require.LessOrEqual(t, ws, SwappedWorkspace(g[0], g[1], g[2], w), "%v after %dx%dx%d", g, m, n, k)
					}
				}
			}
		}
	}
}

func TestPlanIsMachineIndependent(t *testing.T) {
	// Tile sizes are multiples of every kernel's MR and NR.
	for _, k := range Kernels() {
		require.Zero(t, unitM%k.MR, k.Name)
		require.Zero(t, unitN%k.NR, k.Name)
		require.LessOrEqual(t, k.MR*k.NR, edgeFloats, k.Name)
	}
}

func TestRunDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 200, 300, 70
	a := Mat{Data: randSlice(r, m*k), Ld: k}
	b := Mat{Data: randSlice(r, n*k), Ld: k, Trans: true}
	c := make([]float32, m*n)
	p := NewPlan(m, n, k, Transposed, 4)
	ws := make([]float32, p.WorkspaceFloats())
	p.Run(a, b, nil, c, n, 1, false, ws)
	require.Zero(t, testing.AllocsPerRun(20, func() { p.Run(a, b, nil, c, n, 1, false, ws) }))
}

func BenchmarkRun(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	// ... and ViT-B/16's at batch 1 (197 tokens), whose row-major weights are packed tile by tile
	for _, s := range [][3]int{{1024, 64, 64}, {1024, 256, 64}, {128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {512, 512, 512}, {7, 64, 64},
		{197, 2304, 768}, {197, 3072, 768}, {197, 768, 3072}} {
		m, n, k := s[0], s[1], s[2]
		for _, layout := range []Layout{RowMajor, Transposed} {
			for _, w := range []int{1, 2} {
				b.Run(fmt.Sprintf("%dx%dx%d/layout%d/w%d", m, n, k, layout, w), func(bb *testing.B) {
					a := Mat{Data: randSlice(r, m*k), Ld: k}
					bm := Mat{Data: randSlice(r, n*k), Ld: n}
					if layout == Transposed {
						bm = Mat{Data: bm.Data, Ld: k, Trans: true}
					}
					c := make([]float32, m*n)
					p := NewPlan(m, n, k, layout, w)
					ws := make([]float32, p.WorkspaceFloats())
					for bb.Loop() {
						p.Run(a, bm, nil, c, n, 1, false, ws)
					}
					bb.ReportMetric(2*float64(m*n*k)*float64(bb.N)/bb.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// With many workers, the tiles of a transformer's products (GPT-2 small's at 128 and 1024
// tokens) keep the participants busy: in every round but the last all of them take a tile,
// and the last is at least 80% full (a product of fewer tiles than workers has fewer slots). (Halving tiles until there were twice as many as workers
// left 36 tiles for 16, a last round a quarter full.)
func TestPlanBalancesWork(t *testing.T) {
	for _, s := range [][4]int{{128, 2304, 768, 0}, {128, 768, 768, 0}, {128, 3072, 768, 0}, {128, 768, 3072, 0},
		{128, 50257, 768, 1}, {1024, 2304, 768, 0}, {1024, 768, 3072, 0}, {1024, 50257, 768, 1}} {
		for _, w := range []int{4, 8, 16} {
			p := NewPlan(s[0], s[1], s[2], Layout(s[3]), w)
			require.Equal(t, min(w, p.tiles()), p.Slots, "%v on %d", s, w)
			rounds := (p.tiles() + w - 1) / w
			require.GreaterOrEqual(t, float64(p.tiles()), 0.8*float64(rounds*w), "%v on %d: %d tiles of %d x %d", s, w, p.tiles(), p.MC, p.NC)
		}
	}
}

// plainPlan is NewPlan's plan for a transposed B without swapping: B packed into panels.
func plainPlan(m, n, k, workers int) Plan {
	p := NewPlan(m, n, k, Transposed, 1)
	if want := int(min(int64(workers), max(2*int64(m)*int64(n)*int64(max(k, 1))/minSlotFlops, 1))); want > 1 {
		p.MC, p.NC = balance(m, n, want, true, ncMax)
		p.Slots = max(min(p.tiles(), want), 1)
	}
	return p
}

// A swapped plan (Plan.Swap) gives the plain path's bits: with and without acc, with a bias,
// A transposed or not, tiles cut anywhere, whatever the workers.
func TestSwapGivesThePlainBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][3]int{{64, 17, 9}, {128, 770, 300}, {100, 1100, 33}, {300, 50, 600}, {257, 13, 8}} {
		for _, workers := range []int{2, 5, 16} {
			for _, transA := range []bool{false, true} {
				m, n, k := s[0], s[1], s[2]
				sw := newPlan(m, n, k, Transposed, workers, true) // forced: these B are under swapMinB
				require.True(t, sw.Swap, "%v on %d", s, workers)
				plain := plainPlan(m, n, k, workers)
				require.False(t, plain.Swap)
				a := Mat{Data: randSlice(r, m*(k+1)), Ld: k + 1}
				if transA {
					a = Mat{Data: randSlice(r, k*(m+3)), Ld: m + 3, Trans: true}
				}
				b := Mat{Data: randSlice(r, n*(k+2)), Ld: k + 2, Trans: true}
				// a row-major B of the same elements, for NewSwappedPlan's plans and NewPlan's
				rm := Mat{Data: make([]float32, k*(n+1)), Ld: n + 1}
				for p := 0; p < k; p++ {
					for j := 0; j < n; j++ {
						rm.Data[p*rm.Ld+j] = b.Data[j*b.Ld+p]
					}
				}
				rsw, rplain := NewSwappedPlan(m, n, k, workers), NewPlan(m, n, k, RowMajor, workers)
				require.True(t, rsw.Swap)
				require.False(t, rplain.Swap)
				bias := randSlice(r, n)
				ldc := n + 3
				c0 := randSlice(r, m*ldc)
				for _, mode := range []string{"set", "acc", "bias"} {
					want := append([]float32(nil), c0...)
					gots := [][]float32{append([]float32(nil), c0...), append([]float32(nil), c0...), append([]float32(nil), c0...)}
					for _, x := range []struct {
						p Plan
						b Mat
						c []float32
					}{{plain, b, want}, {sw, b, gots[0]}, {rsw, rm, gots[1]}, {rplain, rm, gots[2]}} {
						ws := randSlice(r, x.p.WorkspaceFloats())
						if mode == "bias" {
							x.p.RunBias(a, x.b, nil, bias, x.c, ldc, 0.7, ws)
						} else {
							x.p.Run(a, x.b, nil, x.c, ldc, 0.7, mode == "acc", ws)
						}
					}
					for i, got := range gots {
						require.Equal(t, want, got, "%v workers %d transA %v %s, plan %d", s, workers, transA, mode, i)
					}
				}
				require.LessOrEqual(t, int64(rsw.WorkspaceFloats()), SwappedWorkspace(int64(m), int64(n), int64(k), workers))
			}
		}
	}
	for _, s := range [][4]int{{63, 50257, 768, 16}, {128, 50257, 768, 1}, {1, 50257, 768, 16}, {1024, 128, 64, 16}} {
		require.False(t, NewPlan(s[0], s[1], s[2], Transposed, s[3]).Swap, "%v", s)
	}
	require.True(t, NewPlan(128, 50257, 768, Transposed, 16).Swap)
	require.False(t, NewPlan(128, 500, 64, RowMajor, 16).Swap)
	require.False(t, NewPlan(128, 500, 64, Custom, 16).Swap)
}

// BenchmarkTransposedB is a tied LM head's product (GPT-2 small's at 128 tokens), swapped and
// plain.
func BenchmarkTransposedB(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	m, n, k := 128, 50257, 768
	a := Mat{Data: randSlice(r, m*k), Ld: k}
	bt := Mat{Data: randSlice(r, n*k), Ld: k, Trans: true}
	c := make([]float32, m*n)
	for _, w := range []int{2, 16} {
		for _, swap := range []bool{false, true} {
			b.Run(fmt.Sprintf("w%d/swap=%v", w, swap), func(b *testing.B) {
				p := NewPlan(m, n, k, Transposed, w)
				if !swap {
					p = plainPlan(m, n, k, w)
				}
				ws := make([]float32, p.WorkspaceFloats())
				for b.Loop() {
					p.Run(a, bt, nil, c, n, 1, false, ws)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// RunTaps computes the product of the A and B that Taps lays out, with the row bias, for taps
// of fewer and of more than KC rows, edges of N, and any workers; its workspace is within
// Workspace's.
func TestRunTapsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][4]int{{1, 16, 3, 9}, {13, 65, 64, 9}, {64, 200, 100, 3}, {40, 49, 300, 2}, {5, 7, 1, 1}} {
		for _, workers := range []int{1, 3, 12} {
			m, n, per, taps := s[0], s[1], s[2], s[3]
			ldb := n + 5
			bData := randSlice(r, per*ldb+3*taps+n)
			off := make([]int, taps)
			for i := range off {
				off[i] = (i * 7) % (3*taps + 1) // taps overlap, as a padded input's shifts do
			}
			lda, aTap := per+2, m*(per+2)+1
			aData := randSlice(r, taps*aTap)
			// the explicit operands
			k := per * taps
			a := Mat{Data: make([]float32, m*k), Ld: k}
			for tp := range taps {
				for i := range m {
					for c := range per {
						a.Data[i*k+tp*per+c] = aData[tp*aTap+i*lda+c]
					}
				}
			}
			bias := randSlice(r, m)
			ldc := n + 1
			want, got := randSlice(r, m*ldc), randSlice(r, m*ldc)
			for i := range m {
				for j := range n {
					want[i*ldc+j] = bias[i]
				}
			}
			naive(m, n, k, a, func(p, j int) float32 { return bData[off[p/per]+p%per*ldb+j] }, want, ldc, 1, true)
			p := NewTapsPlan(m, n, per, taps, workers)
			require.LessOrEqual(t, int64(p.WorkspaceFloats()), Workspace(int64(m), int64(n), int64(k), RowMajor, workers))
			ws := make([]float32, p.WorkspaceFloats())
			p.RunTaps(Mat{Data: aData, Ld: lda}, Mat{Data: bData, Ld: ldb}, Taps{B: off, ATap: aTap}, bias, got, ldc, ws)
			for i := range m {
				for j := range n {
					require.InDelta(t, want[i*ldc+j], got[i*ldc+j], 1e-4*float64(k), "%v workers %d (%d, %d)", s, workers, i, j)
				}
			}
		}
	}
	p := NewTapsPlan(2, 3, 2, 2, 1)
	require.Panics(t, func() { // B too short for its last tap
		p.RunTaps(Mat{Data: make([]float32, 8), Ld: 2}, Mat{Data: make([]float32, 6), Ld: 3}, Taps{B: []int{0, 1}, ATap: 4}, nil, make([]float32, 6), 3, nil)
	})
}

// A large row-major B packed into panels (packsRowMajor) gives the bits of B read in place:
// the same micro-kernel over the same slabs, on every kernel, with or without acc, a bias, a
// row bias and an epilogue, edges of N and M anywhere, whatever the workers. The threshold is
// lowered so that small products take the packed path.
func TestPackedRowMajorGivesTheInPlaceBits(t *testing.T) {
	defer func(old int64) { packRowMajorMinB = old }(packRowMajorMinB)
	packRowMajorMinB = 1
	r := rand.New(rand.NewPCG(13, 14))
	for _, kern := range Kernels() {
		for _, s := range [][3]int{{48, 17, 9}, {60, 100, 300}, {197, 230, 77}, {100, 33, 513}, {49, 1100, 40}} {
			for _, workers := range []int{1, 2, 5} {
				m, n, k := s[0], s[1], s[2]
				packed := NewPlan(m, n, k, RowMajor, workers)
				require.True(t, packed.Pack, "%v", s)
				inPlace := newPlan(m, n, k, RowMajor, workers, false)
				require.False(t, inPlace.Pack)
				inPlace.MC, inPlace.NC, inPlace.Slots = packed.MC, packed.NC, packed.Slots // the same tiles
				a := Mat{Data: randSlice(r, m*(k+1)), Ld: k + 1}
				b := Mat{Data: randSlice(r, k*(n+3)), Ld: n + 3}
				ldc := n + 2
				c0 := randSlice(r, m*ldc)
				bias, rowBias := randSlice(r, n), randSlice(r, m)
				for _, mode := range []string{"set", "acc", "bias", "rowbias", "epilogue"} {
					var outs [2][]float32
					for i, p := range []Plan{packed, inPlace} {
						c := append([]float32(nil), c0...)
						ws := randSlice(r, p.WorkspaceFloats())
						switch mode {
						case "set", "acc":
							p.run(kern, a, b, nil, tileOps{}, c, ldc, 0.7, mode == "acc", ws)
						case "bias":
							p.run(kern, a, b, nil, tileOps{bias: bias}, c, ldc, 0.7, true, ws)
						case "rowbias":
							p.run(kern, a, b, nil, tileOps{rowBias: rowBias}, c, ldc, 0.7, true, ws)
						case "epilogue":
							p.run(kern, a, b, nil, tileOps{rowBias: rowBias, add: c0, relu: true}, c, ldc, 0.7, true, ws)
						}
						outs[i] = c
					}
					require.Equal(t, outs[1], outs[0], "%s %v on %d, %s", kern.Name, s, workers, mode)
				}
				require.LessOrEqual(t, int64(packed.WorkspaceFloats()), Workspace(int64(m), int64(n), int64(k), RowMajor, workers))
			}
		}
	}
	require.False(t, NewPlan(packRowMajorMinM-1, 3072, 768, RowMajor, 2).Pack) // too few rows
}
