// Package engine plans models for a binding or a range of bindings and runs them: it composes
// graph, kernels and planner (and alloc, to execute), so the estimator's figures and the runner's
// reservation come from the same code.
//
// The pieces, in the order a model meets them:
//   - Plan (plan.go) plans one concrete binding: every node's kernel and tactic, its workspace R,
//     the order the nodes run in, and one arena holding activations and workspaces (Planned).
//   - PlanEnvelope (envelope.go) plans a range of bindings, the Envelope: its corners and the
//     bindings beside every tactic switch, each node's workspace bound W over the range, and the
//     worst arena (EnvelopePlan). This is the Level-1 estimate and the Level-2 reservation.
//   - NewRuntime (runtime.go) loads a model on a kernels.Backend: it checks that every value a
//     device kernel reads is resident or planned (resident.go, DeviceReadError), and the device
//     weights, every session's arena and its state buffers against the device before anything is
//     allocated (ReservationError), then makes the weights and Constants resident once. With
//     RuntimeOptions.Tight it reserves the tight plan instead (tight.go): workspaces the device
//     measures below their caps.
//   - A Session (session.go, run.go) owns a stream, its arena and its state buffers (state.go).
//     Each input-shape pattern is planned once per runtime and bound once per session (a
//     program); with RuntimeOptions.Graphs its kernels are captured once and replayed.
//   - State buffers outlive runs: graph inputs and outputs held outside the arena, such as a KV
//     cache (package generate drives them).
//
// Invariants:
//  1. The estimator and the runner agree to the byte when they plan with equal Options:
//     planning depends on the model, the binding, the Options and StepLimit, never on the
//     machine or the clock.
//  2. Nothing is uploaded or reserved unless the whole reservation (weights + sessions x
//     (arena + state)) fits; a failed NewRuntime or NewSession releases what it took.
//  3. After a pattern's first run on a session, its runs allocate nothing: no device memory, no
//     allocator block and no Go heap object (tests count all three).
//  4. A kernel never gets more workspace than its pattern's plan holds for it, except under the
//     Fallback policy, which allocates all of R for that invocation alone.
//  5. A fault that leaves the device unusable marks the runtime lost (lost.go): every later run
//     and session fails with the same DeviceLostError instead of serving results.
package engine
