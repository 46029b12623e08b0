/*
Package planner places the buffers of a sequential run inside one arena: lifetimes in, offsets out.

It solves the offline dynamic storage allocation problem, and knows nothing of devices or
models: libs/graph builds its Problems, libs/engine and the apps use its Plans.

# Problems and plans

A Problem lists Buffers (size, alignment, half-open lifetime [Start, End) in steps) and an
optional Capacity. Solve returns a Plan: one offset per buffer, the peak, the LowerBound, and
whether the peak is proven optimal. Verify checks any plan against its problem without sharing
code with the solvers; every plan a test or a runner uses should pass through it.

A buffer may take another's bytes in place (Buffer.InPlace: a node's output written over an
input it reads for the last time, where the kernel allows it). The solvers place the two as one
buffer over the union of their lifetimes; Verify accepts that overlap, which Validate has
checked is one step long, and no other.

	plan, err := planner.Solve(ctx, problem, planner.Options{})
	if err == nil {
		err = planner.Verify(problem, plan)
	}

# Solvers

The heuristics are the ones the field uses: TensorFlow Lite's greedy by size (GreedyBySize),
onnxruntime's execution-order best fit (ExecOrderBestFit) and XLA's global decreasing best fit
ordered by size, area or lifetime (BestFitBySize, BestFitByArea, BestFitByLifetime); Best runs
them all. Exact (the default) starts from Best and runs an anytime search in the style of
Google's MiniMalloc, which either finds a plan within the capacity, proves there is none, or,
without a capacity, lowers the peak towards the lower bound until it is proven optimal or the
limits are reached. Limits are wall time (Options.TimeLimit) or, for answers that do not depend
on the machine, work (Options.StepLimit). exact.go describes the search.

# Patterns, workspaces, files

Cache keeps plans by Signature (input shapes plus route-deciding scalars), bounded and single
flight. Policy.Decide implements the W/C/R workspace rule (workspace.go): a kernel's workspace
comes whole from its planned slot or whole from one dynamic allocation, never split; the caller
supplies the three sizes and counts the outcomes. Room (room.go) is the largest range a solved
plan leaves free for one buffer over its lifetime below the peak: a workspace that is a choice
(a cap the kernel may use any part of) grows into it without moving the peak. ReadCSV and WriteCSV speak MiniMalloc's CSV
format, and Summary is the account a CLI prints.

# Concurrency

Problem, Plan, Signature, Summary, Policy and Decision are plain values. Solve, Verify,
LowerBound, Room, Policy.Decide, ReadCSV and WriteCSV keep no state and may be called concurrently
(on values not being modified). Cache is safe for concurrent use.
*/
package planner
