package graph

import "fmt"

// AttrKind is the type of an attribute's value.
type AttrKind uint8

const (
	AttrUndefined AttrKind = iota
	AttrInt
	AttrFloat
	AttrString
	AttrTensor
	AttrInts
	AttrFloats
	AttrStrings
	AttrGraph // subgraphs are recorded but not imported
)

func (k AttrKind) String() string {
	switch k {
	case AttrInt:
		return "int"
	case AttrFloat:
		return "float"
	case AttrString:
		return "string"
	case AttrTensor:
		return "tensor"
	case AttrInts:
		return "ints"
	case AttrFloats:
		return "floats"
	case AttrStrings:
		return "strings"
	case AttrGraph:
		return "graph"
	}
	return "undefined"
}

// Attribute is one named attribute of a node; only the field of its Kind is set.
type Attribute struct {
	Name    string
	Kind    AttrKind
	Int     int64
	Float   float32
	String  string
	Tensor  *HostTensor
	Ints    []int64
	Floats  []float32
	Strings []string
}

// Attributes are a node's attributes. The zero value has none. Attributes are immutable
// and safe for concurrent use; the getters return shared slices that must not be modified.
type Attributes struct {
	list []Attribute // sorted by nothing: attribute lists are short, a scan is cheapest
}

// NewAttributes returns Attributes holding attrs; a later attribute of the same name wins.
func NewAttributes(attrs ...Attribute) Attributes {
	return Attributes{list: append([]Attribute(nil), attrs...)}
}

func (a Attributes) find(name string) *Attribute {
	for i := len(a.list) - 1; i >= 0; i-- {
		if a.list[i].Name == name {
			return &a.list[i]
		}
	}
	return nil
}

// Has reports whether the attribute is present.
func (a Attributes) Has(name string) bool { return a.find(name) != nil }

// Get returns the attribute and whether it is present.
func (a Attributes) Get(name string) (Attribute, bool) {
	if at := a.find(name); at != nil {
		return *at, true
	}
	return Attribute{}, false
}

// Names returns the attribute names in their order in the model.
func (a Attributes) Names() []string {
	out := make([]string, len(a.list))
	for i, at := range a.list {
		out[i] = at.Name
	}
	return out
}

// Int returns an int attribute, or def if it is absent or of another kind.
func (a Attributes) Int(name string, def int64) int64 {
	if at := a.find(name); at != nil && at.Kind == AttrInt {
		return at.Int
	}
	return def
}

// Ints returns an ints attribute, or nil if it is absent or of another kind.
func (a Attributes) Ints(name string) []int64 {
	if at := a.find(name); at != nil && at.Kind == AttrInts {
		return at.Ints
	}
	return nil
}

// Float returns a float attribute, or def if it is absent or of another kind.
func (a Attributes) Float(name string, def float32) float32 {
	if at := a.find(name); at != nil && at.Kind == AttrFloat {
		return at.Float
	}
	return def
}

// Floats returns a floats attribute, or nil if it is absent or of another kind.
func (a Attributes) Floats(name string) []float32 {
	if at := a.find(name); at != nil && at.Kind == AttrFloats {
		return at.Floats
	}
	return nil
}

// String returns a string attribute, or def if it is absent or of another kind.
func (a Attributes) String(name, def string) string {
	if at := a.find(name); at != nil && at.Kind == AttrString {
		return at.String
	}
	return def
}

// Strings returns a strings attribute, or nil if it is absent or of another kind.
func (a Attributes) Strings(name string) []string {
	if at := a.find(name); at != nil && at.Kind == AttrStrings {
		return at.Strings
	}
	return nil
}

// Tensor returns a tensor attribute and whether it is present with that kind.
func (a Attributes) Tensor(name string) (*HostTensor, bool) {
	if at := a.find(name); at != nil && at.Kind == AttrTensor && at.Tensor != nil {
		return at.Tensor, true
	}
	return nil, false
}

// Len returns the number of attributes.
func (a Attributes) Len() int { return len(a.list) }

func (a Attributes) kindOf(name string) AttrKind {
	if at := a.find(name); at != nil {
		return at.Kind
	}
	return AttrUndefined
}

// requireKind returns an error if the attribute is present with another kind.
func (a Attributes) requireKind(name string, k AttrKind) error {
	if got := a.kindOf(name); got != AttrUndefined && got != k {
		return fmt.Errorf("attribute %q is %s, want %s", name, got, k)
	}
	return nil
}
