// Package alloc provides devices and streams, a stream-ordered caching allocator, arenas and workspace carving.
//
// # Devices
//
// A Device is one accelerator's memory, streams, events and graph capture, with device addresses
// as integers (Ptr) and streams, events and graphs as handles, as the CUDA driver API has them.
// CPUDevice implements it with host memory mapped outside the Go heap and a goroutine per
// stream, so that everything above it, stream-ordering bugs included, runs and is tested
// without a GPU. The CUDA device lives in carve.dev/libs/alloc/cuda behind the cuda build tag.
//
// # Memory
//
//   - Allocator: a caching allocator of PyTorch's kind. Alloc(stream, n) and Free are stream
//     ordered; RecordStream declares use on other streams; EmptyCache and DestroyStream return
//     memory to the device; a typed *OutOfMemoryError carries a statistics snapshot. The rules
//     it keeps, and where, are written at the top of allocator.go.
//   - Graph pools: BeginCapture/EndCapture give a captured graph private memory that lives
//     until the Graph is released (GraphPool, Graph).
//   - Scratch: a kernel invocation's own workspace, back in the pool when the invocation's work
//     is done.
//   - Arena: one reservation holding a memory plan; Bind turns planned offsets into addresses.
//   - Carve: lays a kernel's workspace Recipe out in a Region, all or nothing; Recipe.Size
//     uses the same layout.
//   - Stats: onnxruntime's and PyTorch's statistics, as a struct and as snake_case JSON.
//
// # Concurrency
//
// Device implementations, Allocator, Graph, GraphPool, Arena and Scratch are safe for concurrent
// use. Allocation, Region, Recipe, Workspace and Stats are values, safe to share once made.
// Funcs launched on a CPUDevice stream must not call the device's waiting methods or the
// allocator (as CUDA host functions must not call CUDA): they would wait for themselves.
package alloc
