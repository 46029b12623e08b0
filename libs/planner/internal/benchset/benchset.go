// Package benchset lists the MiniMalloc benchmark instances in testdata/minimalloc with the
// figures measured for them, for the planner's benchmarks and its table printer.
package benchset

// Instance is one MiniMalloc "challenging" instance and the reference figures from
// testdata/minimalloc/README.md.
type Instance struct {
	Name       string  // A..K
	File       string  // file name under testdata/minimalloc
	Buffers    int     // rows in the file
	LowerBound int64   // max live bytes at any step
	BestKnown  int64   // smallest peak known to be reachable
	Proven     bool    // BestKnown is known to be optimal
	MiniMalloc float64 // seconds MiniMalloc needed at capacity 1048576 on a 2-core machine
	Quick      bool    // small enough for unit tests: the exact search settles it in well under a second
}

// Instances are the 11 instances, in order. They are safe to share: nothing modifies them.
var Instances = []Instance{
	{"A", "A.1048576.csv", 154, 1048576, 1048576, true, 8.11, false},
	{"B", "B.1048576.csv", 170, 1048576, 1048576, true, 6.86, false},
	{"C", "C.1048576.csv", 203, 1039360, 1039360, true, 0.84, true},
	{"D", "D.1048576.csv", 213, 986112, 1038336, false, 6.11, false},
	{"E", "E.1048576.csv", 215, 1048576, 1048576, true, 9.08, false},
	{"F", "F.1048576.csv", 296, 1048576, 1048576, true, 11.80, false},
	{"G", "G.1048576.csv", 308, 1048576, 1048576, true, 3.68, false},
	{"H", "H.1048576.csv", 316, 1048576, 1048576, true, 2.84, false},
	{"I", "I.1048576.csv", 374, 1048576, 1048576, true, 5.08, false},
	{"J", "J.1048576.csv", 409, 989184, 1041408, false, 1.08, false},
	{"K", "K.1048576.csv", 454, 1048576, 1048576, true, 0.87, true},
}
