//go:build race

package tp_test

// raceEnabled: under the race detector the TorchScript concat-form decoders' plans (hundreds of
// nodes, planned over their envelope at every rank's load) take minutes each, past go test's
// timeout; TestShardedGeneration leaves them to the plain run and keeps every GQA form, whose
// ranks exercise the same collectives.
const raceEnabled = true
