package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// Attrs builds graph.Attributes from name/value pairs, for tests and tools: values are int,
// int64, []int64, float32, float64, []float32, string, []string or *graph.HostTensor.
// It panics on a malformed list, which is a programming error.
func Attrs(pairs ...any) graph.Attributes {
	if len(pairs)%2 != 0 {
		panic("kernels.Attrs: odd number of arguments")
	}
	var list []graph.Attribute
	for i := 0; i < len(pairs); i += 2 {
		name, ok := pairs[i].(string)
		if !ok {
			panic(fmt.Sprintf("kernels.Attrs: name %v is not a string", pairs[i]))
		}
		a := graph.Attribute{Name: name}
		switch v := pairs[i+1].(type) {
		case int:
			a.Kind, a.Int = graph.AttrInt, int64(v)
		case int64:
			a.Kind, a.Int = graph.AttrInt, v
		case []int64:
			a.Kind, a.Ints = graph.AttrInts, v
		case float32:
			a.Kind, a.Float = graph.AttrFloat, v
		case float64:
			a.Kind, a.Float = graph.AttrFloat, float32(v)
		case []float32:
			a.Kind, a.Floats = graph.AttrFloats, v
		case string:
			a.Kind, a.String = graph.AttrString, v
		case []string:
			a.Kind, a.Strings = graph.AttrStrings, v
		case *graph.HostTensor:
			a.Kind, a.Tensor = graph.AttrTensor, v
		default:
			panic(fmt.Sprintf("kernels.Attrs: attribute %q has unsupported type %T", name, v))
		}
		list = append(list, a)
	}
	return graph.NewAttributes(list...)
}
