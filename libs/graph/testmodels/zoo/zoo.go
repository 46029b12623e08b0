// Package zoo embeds carve's model zoo: tiny random-weight models of the architecture families
// users run (Llama, Mistral, Qwen, Phi-3, Gemma, GPT-2, GPT-NeoX, OPT, Falcon, BERT, RoBERTa,
// DeBERTa, T5, ...), exported the way users export them (torch.onnx's dynamo exporter with and
// without an attention_mask input, and the TorchScript exporter), with onnxruntime's CPU
// outputs at two bindings, the second right-padded, and each family's config.json.
//
// The zoo is the sample of what users bring, not a fixture set to tune against: code is checked
// on it, never shaped to it. tools/zoo/make_zoo.py made it on the GPU machine and
// tools/zoo/import_zoo.py put it here; testdata/manifest.json says how each model was made and
// which families could not be exported (with the exporter's reason). Everything here is safe
// for concurrent use.
package zoo

import (
	"embed"
	"sync"

	"carve.dev/libs/graph/testmodels"
)

//go:embed testdata
var files embed.FS

var load = sync.OnceValues(func() (*testmodels.Manifest, error) { return testmodels.Load(files, "testdata") })

func manifest() *testmodels.Manifest {
	m, err := load()
	if err != nil {
		panic(err) // the embedded manifest is part of the build
	}
	return m
}

// Models returns every zoo model, sorted by name.
func Models() []testmodels.Model { return append([]testmodels.Model(nil), manifest().Models...) }

// Failures returns the families or exports the zoo script could not make, and why.
func Failures() []testmodels.Failure {
	return append([]testmodels.Failure(nil), manifest().Failures...)
}

// Versions returns the versions of the tools that made the zoo (torch, transformers, ...).
func Versions() map[string]string { return manifest().Versions }

// Config returns the config.json of a model's family.
func Config(m testmodels.Model) ([]byte, error) { return files.ReadFile("testdata/" + m.Config) }
