package planner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestReadCSV(t *testing.T) {
	f, err := os.Open("testdata/minimalloc/input.12.csv")
	require.NoError(t, err)
	defer f.Close()
	p, err := planner.ReadCSV(f)
	require.NoError(t, err)
	require.Equal(t, example, p)

	t.Run("any column order, extra columns, spaces, alignment", func(t *testing.T) {
		in := "size, offset ,upper,id,lower,alignment,note\n" +
			"4,0,3,b1,0,,x\n" +
			"8, 16, 9, b2 ,3,8,y\n"
		p, err := planner.ReadCSV(strings.NewReader(in))
		require.NoError(t, err)
		require.Equal(t, []planner.Buffer{
			{ID: "b1", Size: 4, Align: 1, Start: 0, End: 3},
			{ID: "b2", Size: 8, Align: 8, Start: 3, End: 9},
		}, p.Buffers)
	})
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"empty", "", 1, "empty input"},
		{"no size column", "id,lower,upper\nb,0,1\n", 1, `header lacks column "size"`},
		{"column twice", "id,lower,upper,size,id\n", 1, "column named twice"},
		{"not a number", "id,lower,upper,size\nb1,0,3,4\nb2,0,x,4\n", 3, `column "upper": "x" is not an integer`},
		{"empty id", "id,lower,upper,size\n,0,3,4\n", 2, "empty id"},
		{"duplicate id", "id,lower,upper,size\nb1,0,3,4\nb2,0,3,4\nb1,1,2,4\n", 4, `id "b1" already used on line 2`},
		{"empty lifetime", "id,lower,upper,size\nb1,3,3,4\n", 2, "empty lifetime [3, 3)"},
		{"negative size", "id,lower,upper,size\nb1,0,3,-4\n", 2, "negative size -4"},
		{"bad alignment", "id,lower,upper,size,alignment\nb1,0,3,4,3\n", 2, "alignment 3 is not a power of two"},
		{"zero alignment", "id,lower,upper,size,alignment\nb1,0,3,4,0\n", 2, "alignment 0 is not positive"},
		{"ragged", "id,lower,upper,size\nb1,0,3\n", 2, "wrong number of fields"},
		{"huge time", "id,lower,upper,size\nb1,0,99999999999999999999,4\n", 2, "is not an integer"},
		{"blank lines skipped", "id,lower,upper,size\n\nb1,0,3,4\n\nb1,0,3,4\n", 5, `already used on line 3`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planner.ReadCSV(strings.NewReader(tc.in))
			var ce *planner.CSVError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, tc.line, ce.Line, "%v", err)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestWriteCSVRoundTrip(t *testing.T) {
	plan, err := planner.Solve(context.Background(), example, planner.Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, planner.WriteCSV(&buf, example, plan))
	require.Equal(t, "id,lower,upper,size,offset\n", strings.SplitAfter(buf.String(), "\n")[0])
	back, err := planner.ReadCSV(&buf)
	require.NoError(t, err)
	require.Equal(t, example, back)

	// Alignments other than 1 travel in an alignment column.
	p := planner.Problem{Buffers: []planner.Buffer{{ID: "a", Size: 10, Start: 0, End: 1}}}
	buf.Reset()
	require.NoError(t, planner.WriteCSV(&buf, p, planner.Plan{Offsets: []int64{0}, Peak: 10}))
	require.Equal(t, "id,lower,upper,size,offset,alignment\na,0,1,10,0,256\n", buf.String())

	require.ErrorContains(t, planner.WriteCSV(&buf, p, planner.Plan{}), "0 offsets for 1 buffers")
}

func TestSummary(t *testing.T) {
	p := example
	plan := planner.Plan{Peak: 12, LowerBound: 12, Optimal: true, Algorithm: planner.Exact, Elapsed: 1500 * time.Millisecond}
	s := planner.NewSummary(p, plan)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.JSONEq(t, `{"peak":12,"lower_bound":12,"optimal":true,"algorithm":"exact","seconds":1.5,"buffers":5}`, string(b))
	require.Equal(t, "peak 12 bytes (lower bound 12, +0.00%, optimal), 5 buffers, exact, 1.500 s", s.String())
}

func FuzzReadCSV(f *testing.F) {
	f.Add("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n")
	f.Add("size,upper,lower,id,offset\n4,3,0,a,0\n")
	f.Add("id,lower,upper,size,alignment\na,0,1,7,8\n")
	f.Add("id,lower,upper,size\n\"a,b\",0,1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := planner.ReadCSV(strings.NewReader(in))
		if err != nil {
			var ce *planner.CSVError
			require.True(t, errors.As(err, &ce), "errors are CSVErrors: %v", err)
			require.Positive(t, ce.Line)
			return
		}
		require.NoError(t, p.Validate())
		// Whatever parses survives a round trip through WriteCSV.
		plan, err := planner.Solve(context.Background(), p, planner.Options{Algorithm: planner.GreedyBySize})
		require.NoError(t, err)
		require.NoError(t, planner.Verify(p, plan))
		var buf bytes.Buffer
		require.NoError(t, planner.WriteCSV(&buf, p, plan))
		back, err := planner.ReadCSV(&buf)
		require.NoError(t, err)
		if len(p.Buffers) == 0 {
			require.Empty(t, back.Buffers)
			return
		}
		require.Equal(t, p, back)
	})
}
