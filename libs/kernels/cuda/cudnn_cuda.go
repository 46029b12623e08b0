//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// cuDNN 9's legacy C API, the part the convolutions call, declared here by hand: the build has
// no cuDNN headers (CUDA's toolchain does not ship them, and carve vendors none), and the
// library is loaded at run time, so a cuda build starts on hosts without it. The signatures and
// enum values are those of NVIDIA's public cuDNN API reference; they are stable across cuDNN 9,
// whose libcudnn.so.9 is the shim that exports the legacy API and loads the sub-libraries that
// implement it. Handles and descriptors are opaque pointers; enums travel as int, as the C ABI
// passes them.
typedef void *dnnHandle;
typedef void *dnnTensor;
typedef void *dnnFilter;
typedef void *dnnConv;
typedef int dnnStatus;

enum {
	DNN_DATA_FLOAT = 0, DNN_DATA_HALF = 2, DNN_DATA_BFLOAT16 = 9, // cudnnDataType_t
	DNN_TENSOR_NCHW = 0,                                          // cudnnTensorFormat_t
	DNN_CROSS_CORRELATION = 1,                                    // cudnnConvolutionMode_t
	DNN_DEFAULT_MATH = 0, DNN_TENSOR_OP_MATH = 1, DNN_FMA_MATH = 3, // cudnnMathType_t
};

// dnnPerf is cudnnConvolutionFwdAlgoPerf_t; cudnnConvolutionBwdDataAlgoPerf_t has the same
// fields (its algo a cudnnConvolutionBwdDataAlgo_t).
typedef struct {
	int algo;
	dnnStatus status;
	float time;    // milliseconds, from the Find calls
	size_t memory; // workspace bytes
	int determinism;
	int mathType;
	int reserved[3];
} dnnPerf;

static struct {
	void *lib;
	size_t (*getVersion)(void);
	const char *(*errorString)(dnnStatus);
	dnnStatus (*create)(dnnHandle *);
	dnnStatus (*destroy)(dnnHandle);
	dnnStatus (*setStream)(dnnHandle, void *);
	dnnStatus (*createTensor)(dnnTensor *);
	dnnStatus (*setTensor4d)(dnnTensor, int format, int dataType, int n, int c, int h, int w);
	dnnStatus (*destroyTensor)(dnnTensor);
	dnnStatus (*createFilter)(dnnFilter *);
	dnnStatus (*setFilter4d)(dnnFilter, int dataType, int format, int k, int c, int h, int w);
	dnnStatus (*destroyFilter)(dnnFilter);
	dnnStatus (*createConv)(dnnConv *);
	dnnStatus (*setConv2d)(dnnConv, int padH, int padW, int u, int v, int dilH, int dilW, int mode, int computeType);
	dnnStatus (*setGroups)(dnnConv, int);
	dnnStatus (*setMath)(dnnConv, int);
	dnnStatus (*destroyConv)(dnnConv);
	dnnStatus (*outDim)(dnnConv, dnnTensor, dnnFilter, int *n, int *c, int *h, int *w);
	dnnStatus (*fwdMax)(dnnHandle, int *);
	dnnStatus (*fwdGet)(dnnHandle, dnnTensor x, dnnFilter, dnnConv, dnnTensor y, int, int *, dnnPerf *);
	dnnStatus (*fwdFind)(dnnHandle, dnnTensor, const void *x, dnnFilter, const void *w, dnnConv, dnnTensor, void *y,
		int, int *, dnnPerf *, void *ws, size_t wsSize);
	dnnStatus (*fwdWs)(dnnHandle, dnnTensor x, dnnFilter, dnnConv, dnnTensor y, int algo, size_t *);
	dnnStatus (*fwd)(dnnHandle, const void *alpha, dnnTensor, const void *x, dnnFilter, const void *w, dnnConv, int algo,
		void *ws, size_t wsSize, const void *beta, dnnTensor, void *y);
	dnnStatus (*bwdMax)(dnnHandle, int *);
	dnnStatus (*bwdGet)(dnnHandle, dnnFilter, dnnTensor dy, dnnConv, dnnTensor dx, int, int *, dnnPerf *);
	dnnStatus (*bwdFind)(dnnHandle, dnnFilter, const void *w, dnnTensor, const void *dy, dnnConv, dnnTensor, void *dx,
		int, int *, dnnPerf *, void *ws, size_t wsSize);
	dnnStatus (*bwdWs)(dnnHandle, dnnFilter, dnnTensor dy, dnnConv, dnnTensor dx, int algo, size_t *);
	dnnStatus (*bwd)(dnnHandle, const void *alpha, dnnFilter, const void *w, dnnTensor, const void *dy, dnnConv, int algo,
		void *ws, size_t wsSize, const void *beta, dnnTensor, void *dx);
} dnn;

static char dnn_msg[512];

// carve_dnn_open opens the library at path (a name the loader searches for, or a path): NULL,
// or the loader's message.
static const char *carve_dnn_open(const char *path) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		snprintf(dnn_msg, sizeof dnn_msg, "%s", e ? e : "dlopen failed");
		return dnn_msg;
	}
	dnn.lib = lib;
	return NULL;
}

// carve_dnn_bind finds every entry point in the opened library: NULL, or what is missing.
static const char *carve_dnn_bind(void) {
#define SYM(f, name) if ((*(void **)&dnn.f = dlsym(dnn.lib, name)) == NULL) return "symbol " name " missing in libcudnn";
	SYM(getVersion, "cudnnGetVersion")
	SYM(errorString, "cudnnGetErrorString")
	SYM(create, "cudnnCreate")
	SYM(destroy, "cudnnDestroy")
	SYM(setStream, "cudnnSetStream")
	SYM(createTensor, "cudnnCreateTensorDescriptor")
	SYM(setTensor4d, "cudnnSetTensor4dDescriptor")
	SYM(destroyTensor, "cudnnDestroyTensorDescriptor")
	SYM(createFilter, "cudnnCreateFilterDescriptor")
	SYM(setFilter4d, "cudnnSetFilter4dDescriptor")
	SYM(destroyFilter, "cudnnDestroyFilterDescriptor")
	SYM(createConv, "cudnnCreateConvolutionDescriptor")
	SYM(setConv2d, "cudnnSetConvolution2dDescriptor")
	SYM(setGroups, "cudnnSetConvolutionGroupCount")
	SYM(setMath, "cudnnSetConvolutionMathType")
	SYM(destroyConv, "cudnnDestroyConvolutionDescriptor")
	SYM(outDim, "cudnnGetConvolution2dForwardOutputDim")
	SYM(fwdMax, "cudnnGetConvolutionForwardAlgorithmMaxCount")
	SYM(fwdGet, "cudnnGetConvolutionForwardAlgorithm_v7")
	SYM(fwdFind, "cudnnFindConvolutionForwardAlgorithmEx")
	SYM(fwdWs, "cudnnGetConvolutionForwardWorkspaceSize")
	SYM(fwd, "cudnnConvolutionForward")
	SYM(bwdMax, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount")
	SYM(bwdGet, "cudnnGetConvolutionBackwardDataAlgorithm_v7")
	SYM(bwdFind, "cudnnFindConvolutionBackwardDataAlgorithmEx")
	SYM(bwdWs, "cudnnGetConvolutionBackwardDataWorkspaceSize")
	SYM(bwd, "cudnnConvolutionBackwardData")
#undef SYM
	return NULL;
}

static size_t carve_dnn_version(void) { return dnn.getVersion(); }
static const char *carve_dnn_error(dnnStatus s) { return dnn.errorString(s); }
static dnnStatus carve_dnn_create(dnnHandle *h) { return dnn.create(h); }
static dnnStatus carve_dnn_destroy(dnnHandle h) { return dnn.destroy(h); }

// carve_dnn_conv is convDesc (conv.go): the forward convolution x [n, c, h, w] -> y [n, k, p, q]
// with filter [k, c / groups, r, s], run backward (y -> x) for ConvTranspose.
typedef struct {
	int backward, dtype;
	int n, c, h, w, k, r, s, p, q;
	int padH, padW, strH, strW, dilH, dilW, groups;
} carve_dnn_conv;

// carve_dnn_plan is a carve_dnn_conv's descriptors: made once, then only read (cuDNN calls
// with them may run concurrently on one handle's callers, who serialize on the handle).
typedef struct {
	carve_dnn_conv d;
	dnnTensor x, y;
	dnnFilter f;
	dnnConv conv[4]; // by cudnnMathType_t: the primary one, and those the ranked algorithms ask for
	int primary;     // FMA for float32 (no TF32), tensor-op for the 16-bit types
} carve_dnn_plan;

static void carve_dnn_plan_free(carve_dnn_plan *p) {
	if (p->x) dnn.destroyTensor(p->x);
	if (p->y) dnn.destroyTensor(p->y);
	if (p->f) dnn.destroyFilter(p->f);
	for (int i = 0; i < 4; i++) if (p->conv[i]) dnn.destroyConv(p->conv[i]);
	free(p);
}

// carve_dnn_conv_desc makes p's convolution descriptor of math type math, once. Compute type
// float: float32 accumulation for every data type (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16
// configurations for the 16-bit types).
static dnnStatus carve_dnn_conv_desc(carve_dnn_plan *p, int math) {
	if (math < 0 || math > 3) return -1;
	if (p->conv[math]) return 0;
	const carve_dnn_conv *d = &p->d;
	dnnConv c = NULL;
	dnnStatus st = dnn.createConv(&c);
	if (st) return st;
	if ((st = dnn.setConv2d(c, d->padH, d->padW, d->strH, d->strW, d->dilH, d->dilW, DNN_CROSS_CORRELATION, DNN_DATA_FLOAT)) ||
	    (st = dnn.setGroups(c, d->groups)) || (st = dnn.setMath(c, math))) {
		dnn.destroyConv(c);
		return st;
	}
	p->conv[math] = c;
	return 0;
}

// carve_dnn_plan_new makes d's descriptors and checks that cuDNN sees the output d says; -2
// when it does not.
static dnnStatus carve_dnn_plan_new(const carve_dnn_conv *d, carve_dnn_plan **out) {
	*out = NULL;
	carve_dnn_plan *p = calloc(1, sizeof *p);
	if (p == NULL) return -1;
	p->d = *d;
	p->primary = d->dtype == DNN_DATA_FLOAT ? DNN_FMA_MATH : DNN_TENSOR_OP_MATH;
	dnnStatus st;
	int n, c, h, w;
	if ((st = dnn.createTensor(&p->x)) || (st = dnn.setTensor4d(p->x, DNN_TENSOR_NCHW, d->dtype, d->n, d->c, d->h, d->w)) ||
	    (st = dnn.createTensor(&p->y)) || (st = dnn.setTensor4d(p->y, DNN_TENSOR_NCHW, d->dtype, d->n, d->k, d->p, d->q)) ||
	    (st = dnn.createFilter(&p->f)) ||
	    (st = dnn.setFilter4d(p->f, d->dtype, DNN_TENSOR_NCHW, d->k, d->c / d->groups, d->r, d->s)) ||
	    (st = carve_dnn_conv_desc(p, p->primary)) || (st = dnn.outDim(p->conv[p->primary], p->x, p->f, &n, &c, &h, &w))) {
		carve_dnn_plan_free(p);
		return st;
	}
	if (n != d->n || c != d->k || h != d->p || w != d->q) {
		carve_dnn_plan_free(p);
		return -2;
	}
	*out = p;
	return 0;
}

// carve_dnn_choice is one algorithm the convolution may run with: its math type, workspace and
// measured time (-1 when ranked by the heuristic).
typedef struct {
	int algo, math;
	size_t ws;
	float ms;
} carve_dnn_choice;

enum { DNN_MAX_RESULTS = 32 };

// carve_dnn_choices keeps, in order, the results that may run: succeeded, float32 on FMA math
// only (exact float32, as carve's float32 GEMMs), a workspace that cuDNN confirms for the
// result's math type and that fits ws_cap. Returns how many it wrote to out.
static int carve_dnn_choices(dnnHandle h, carve_dnn_plan *p, const dnnPerf *res, int got, uint64_t ws_cap,
		carve_dnn_choice *out) {
	int n = 0;
	for (int i = 0; i < got && n < DNN_MAX_RESULTS; i++) {
		const dnnPerf *r = &res[i];
		if (r->status != 0) continue;
		if (p->d.dtype == DNN_DATA_FLOAT ? r->mathType != DNN_FMA_MATH
		    : (r->mathType != DNN_DEFAULT_MATH && r->mathType != DNN_TENSOR_OP_MATH && r->mathType != DNN_FMA_MATH)) continue;
		int dup = 0;
		for (int j = 0; j < n; j++) dup |= out[j].algo == r->algo && out[j].math == r->mathType;
		if (dup || carve_dnn_conv_desc(p, r->mathType)) continue;
		size_t ws = 0;
		dnnConv c = p->conv[r->mathType];
		dnnStatus st = p->d.backward ? dnn.bwdWs(h, p->f, p->y, c, p->x, r->algo, &ws)
		                             : dnn.fwdWs(h, p->x, p->f, c, p->y, r->algo, &ws);
		if (st || ws > ws_cap) continue;
		out[n].algo = r->algo;
		out[n].math = r->mathType;
		out[n].ws = ws;
		out[n].ms = r->time;
		n++;
	}
	return n;
}

// carve_dnn_rank ranks p's algorithms by cuDNN's heuristic (no device work).
static dnnStatus carve_dnn_rank(dnnHandle h, carve_dnn_plan *p, uint64_t ws_cap, carve_dnn_choice *out, int *n) {
	dnnPerf res[DNN_MAX_RESULTS];
	int want = 0, got = 0;
	*n = 0;
	dnnStatus st = p->d.backward ? dnn.bwdMax(h, &want) : dnn.fwdMax(h, &want);
	if (st) return st;
	if (want < 1 || want > DNN_MAX_RESULTS) want = DNN_MAX_RESULTS;
	dnnConv c = p->conv[p->primary];
	st = p->d.backward ? dnn.bwdGet(h, p->f, p->y, c, p->x, want, &got, res)
	                   : dnn.fwdGet(h, p->x, p->f, c, p->y, want, &got, res);
	if (st) return st;
	for (int i = 0; i < got; i++) res[i].time = -1;
	*n = carve_dnn_choices(h, p, res, got, ws_cap, out);
	return 0;
}

// carve_dnn_find runs and times p's algorithms on the handle's stream with the buffers given
// (x, w, y as carve_dnn_conv names them; ws of ws_cap bytes), fastest first. It synchronizes.
static dnnStatus carve_dnn_find(dnnHandle h, carve_dnn_plan *p, uintptr_t stream, uintptr_t x, uintptr_t w,
		uintptr_t y, uintptr_t ws, uint64_t ws_cap, carve_dnn_choice *out, int *n) {
	dnnPerf res[DNN_MAX_RESULTS];
	int want = 0, got = 0;
	*n = 0;
	dnnStatus st = dnn.setStream(h, (void *)stream);
	if (st) return st;
	st = p->d.backward ? dnn.bwdMax(h, &want) : dnn.fwdMax(h, &want);
	if (st) return st;
	if (want < 1 || want > DNN_MAX_RESULTS) want = DNN_MAX_RESULTS;
	dnnConv c = p->conv[p->primary];
	void *wsp = ws_cap ? (void *)ws : NULL;
	st = p->d.backward
	    ? dnn.bwdFind(h, p->f, (const void *)w, p->y, (const void *)y, c, p->x, (void *)x, want, &got, res, wsp, ws_cap)
	    : dnn.fwdFind(h, p->x, (const void *)x, p->f, (const void *)w, c, p->y, (void *)y, want, &got, res, wsp, ws_cap);
	if (st) return st;
	*n = carve_dnn_choices(h, p, res, got, ws_cap, out);
	return 0;
}

// carve_dnn_run queues the convolution on stream with algorithm algo of math type math: y = conv(x)
// forward, x = conv^T(y) backward; with blend, y = conv(x) + y forward (beta 1: a FusedConv's Z in
// place of y), else the output is only written (beta 0).
static dnnStatus carve_dnn_run(dnnHandle h, carve_dnn_plan *p, int algo, int math, uintptr_t x, uintptr_t w,
		uintptr_t y, uintptr_t ws, uint64_t ws_size, uintptr_t stream, int blend) {
	const float one = 1.f, zero = 0.f, beta = blend ? 1.f : 0.f;
	if (math < 0 || math > 3 || p->conv[math] == NULL) return -1;
	dnnStatus st = dnn.setStream(h, (void *)stream);
	if (st) return st;
	void *wsp = ws_size ? (void *)ws : NULL;
	if (p->d.backward)
		return dnn.bwd(h, &one, p->f, (const void *)w, p->y, (const void *)y, p->conv[math], algo, wsp, ws_size, &zero,
		               p->x, (void *)x);
	return dnn.fwd(h, &one, p->x, (const void *)x, p->f, (const void *)w, p->conv[math], algo, wsp, ws_size, &beta, p->y,
	               (void *)y);
}
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// DnnError is a cuDNN status other than success.
type DnnError struct {
	Call   string
	Status int
	Msg    string // cudnnGetErrorString's
}

func (e *DnnError) Error() string {
	return fmt.Sprintf("cuda: %s: cuDNN status %d (%s)", e.Call, e.Status, e.Msg)
}

func dnnCheck(call string, st C.dnnStatus) error {
	if st == 0 {
		return nil
	}
	msg := "carve: no result"
	switch st {
	case -1:
		msg = "carve: out of host memory, or a bad math type"
	case -2:
		msg = "carve: cuDNN computes another output shape than the node's"
	default:
		if p := C.carve_dnn_error(st); p != nil {
			msg = C.GoString(p)
		}
	}
	return &DnnError{Call: call, Status: int(st), Msg: msg}
}

// CudnnLoadError reports that cuDNN could not be loaded: the convolutions run the own kernels.
type CudnnLoadError struct {
	Tried  []string // the paths and names tried, in order
	Reason string
}

func (e *CudnnLoadError) Error() string {
	return fmt.Sprintf("cuda: cuDNN 9 not loaded (tried %s): %s; put its lib folder (PyTorch's torch/lib or nvidia/cudnn/lib) on LD_LIBRARY_PATH or name it in CARVE_CUDNN",
		strings.Join(e.Tried, ", "), e.Reason)
}

// cudnnLib is the name the loader searches for: cuDNN 9's shim, which exports the legacy API.
const cudnnLib = "libcudnn.so.9"

var dnnLoad struct {
	once    sync.Once
	err     error
	version int
}

// loadDnn opens cuDNN once per process: first what the environment variable CARVE_CUDNN names
// (the library's path, or its folder), then libcudnn.so.9 on the loader's path.
func loadDnn() error {
	dnnLoad.once.Do(func() {
		var tried, why []string
		try := func(path string) bool {
			tried = append(tried, path)
			cp := C.CString(path)
			defer C.free(unsafe.Pointer(cp))
			if msg := C.carve_dnn_open(cp); msg != nil {
				why = append(why, C.GoString(msg))
				return false
			}
			return true
		}
		ok := false
		if env := os.Getenv("CARVE_CUDNN"); env != "" {
			if fi, err := os.Stat(env); err == nil && fi.IsDir() {
				env = filepath.Join(env, cudnnLib)
			}
			ok = try(env)
		}
		if !ok && !try(cudnnLib) {
			dnnLoad.err = &CudnnLoadError{Tried: tried, Reason: strings.Join(why, "; ")}
			return
		}
		if msg := C.carve_dnn_bind(); msg != nil {
			dnnLoad.err = &CudnnLoadError{Tried: tried, Reason: C.GoString(msg)}
			return
		}
		v := int(C.carve_dnn_version())
		if v < 90000 || v >= 100000 {
			dnnLoad.err = &CudnnLoadError{Tried: tried, Reason: fmt.Sprintf("version %d is not cuDNN 9, whose API carve declares", v)}
			return
		}
		dnnLoad.version = v
	})
	return dnnLoad.err
}

// CudnnVersion is the loaded cuDNN's version (90100 for 9.1.0), loading it if needed.
func CudnnVersion() (int, error) {
	if err := loadDnn(); err != nil {
		return 0, err
	}
	return dnnLoad.version, nil
}

// dnnHandle is a device's one cuDNN handle. A handle is not safe for concurrent use and its
// stream is state (cudnnSetStream), so every call through it holds mu from setting the stream
// to queuing the work; the calls only queue, so the hold is short.
type dnnHandle struct {
	mu sync.Mutex
	h  C.dnnHandle
}

var dnnHandles struct {
	sync.Mutex
	m map[*acuda.Device]*dnnHandle
}

// dnnHandleFor returns dev's handle, creating it on first use. cudnnCreate allocates on the
// device and may not run inside a stream capture: callers make sure none is under way.
func dnnHandleFor(dev *acuda.Device) (*dnnHandle, error) {
	if err := loadDnn(); err != nil {
		return nil, err
	}
	dnnHandles.Lock()
	defer dnnHandles.Unlock()
	if h := dnnHandles.m[dev]; h != nil {
		return h, nil
	}
	var h C.dnnHandle
	if err := dev.Do(func() error { return dnnCheck("cudnnCreate", C.carve_dnn_create(&h)) }); err != nil {
		return nil, err
	}
	if dnnHandles.m == nil {
		dnnHandles.m = map[*acuda.Device]*dnnHandle{}
	}
	dh := &dnnHandle{h: h}
	dnnHandles.m[dev] = dh
	return dh, nil
}

// dnnChoice is one way to run a plan: a cuDNN algorithm (math type, workspace, measured time;
// -1 from the heuristic) or the own kernels.
type dnnChoice struct {
	own        bool
	algo, math int
	ws         int64
	ms         float32
}

// dnnRank is a plan's choices, fastest first, each fitting the plan's declared workspace; the
// own kernels, which fit any, end it (or sit where they measured). warm[i] is set once choice
// i has run outside a stream capture (or was run by the measurement): inside one only a warm
// choice runs, since a library's first run of an algorithm may initialize what a capture cannot
// record (the own kernels run instead).
type dnnRank struct {
	choices  []dnnChoice
	measured bool
	warm     []atomic.Bool
}

func newRank(choices []dnnChoice, measured bool) *dnnRank {
	r := &dnnRank{choices: choices, measured: measured, warm: make([]atomic.Bool, len(choices))}
	for i, c := range choices {
		if c.own || measured {
			r.warm[i].Store(true)
		}
	}
	return r
}

// first is the index of the first choice that fits size bytes of workspace: a cuDNN
// algorithm, or the own kernels, which fit any.
func (r *dnnRank) first(size int64) int {
	for i, c := range r.choices {
		if c.own || c.ws <= size {
			return i
		}
	}
	return len(r.choices) - 1 // not reached: the own kernels are in every ranking
}

// dnnPlan is a convDesc's descriptors on one device and its ranked choices. p is nil when cuDNN
// cannot run the convolution; why says why.
type dnnPlan struct {
	p    *C.carve_dnn_plan
	h    *dnnHandle
	why  string
	rank atomic.Pointer[dnnRank]
}

type dnnKey struct {
	dev *acuda.Device
	d   convDesc
}

// dnnPlans caches the plans: descriptors are made and ranked once per (device, convolution), so
// the steady state neither asks cuDNN nor allocates; Backend.Close destroys them.
var dnnPlans struct {
	sync.RWMutex
	m       map[dnnKey]*dnnPlan
	measure sync.Mutex // one measurement at a time
}

func lookupPlan(k dnnKey) *dnnPlan {
	dnnPlans.RLock()
	defer dnnPlans.RUnlock()
	return dnnPlans.m[k]
}

// makePlan returns k's plan, making it on first use: cuDNN loaded, the device's handle, the
// descriptors, the heuristic's ranking. It never returns nil: a convolution cuDNN cannot run
// (cuDNN missing included) gets a plan without descriptors that says why. It must not be called
// inside a stream capture (the handle may be created).
func makePlan(k dnnKey) *dnnPlan {
	dnnPlans.Lock()
	defer dnnPlans.Unlock()
	if p := dnnPlans.m[k]; p != nil {
		return p
	}
	if dnnPlans.m == nil {
		dnnPlans.m = map[dnnKey]*dnnPlan{}
	}
	p := &dnnPlan{}
	dnnPlans.m[k] = p
	own := []dnnChoice{{own: true}}
	h, err := dnnHandleFor(k.dev)
	if err != nil {
		p.why = err.Error()
		p.rank.Store(newRank(own, false))
		return p
	}
	d := cDesc(k.d)
	var cp *C.carve_dnn_plan
	var res [C.DNN_MAX_RESULTS]C.carve_dnn_choice
	var n C.int
	err = k.dev.Do(func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := dnnCheck("cuDNN descriptors", C.carve_dnn_plan_new(&d, &cp)); err != nil {
			return err
		}
		return dnnCheck("cudnnGetConvolution*Algorithm_v7", C.carve_dnn_rank(h.h, cp, C.uint64_t(k.d.WsCap), &res[0], &n))
	})
	if err != nil {
		if cp != nil {
			C.carve_dnn_plan_free(cp)
		}
		p.why = err.Error()
		p.rank.Store(newRank(own, false))
		return p
	}
	p.p, p.h = cp, h
	p.rank.Store(newRank(append(goChoices(res[:n]), own...), false))
	if n == 0 {
		p.why = fmt.Sprintf("no cuDNN algorithm within %d bytes of workspace", k.d.WsCap)
	}
	return p
}

func cDesc(d convDesc) C.carve_dnn_conv {
	var c C.carve_dnn_conv
	if d.Backward {
		c.backward = 1
	}
	c.dtype = C.DNN_DATA_FLOAT
	switch d.DType {
	case graph.Float16:
		c.dtype = C.DNN_DATA_HALF
	case graph.BFloat16:
		c.dtype = C.DNN_DATA_BFLOAT16
	}
	c.n, c.c, c.h, c.w = C.int(d.N), C.int(d.C), C.int(d.H), C.int(d.W)
	c.k, c.r, c.s, c.p, c.q = C.int(d.K), C.int(d.R), C.int(d.S), C.int(d.P), C.int(d.Q)
	c.padH, c.padW, c.strH, c.strW = C.int(d.PadH), C.int(d.PadW), C.int(d.StrH), C.int(d.StrW)
	c.dilH, c.dilW, c.groups = C.int(d.DilH), C.int(d.DilW), C.int(d.Groups)
	return c
}

func goChoices(cs []C.carve_dnn_choice) []dnnChoice {
	out := make([]dnnChoice, len(cs))
	for i, c := range cs {
		out[i] = dnnChoice{algo: int(c.algo), math: int(c.math), ws: int64(c.ws), ms: float32(c.ms)}
	}
	return out
}

// call queues the convolution on s: cuDNN with the fastest choice that fits the "cudnn" part
// carved (none when the Recipe has no part: only algorithms that need no workspace), or the own
// kernels when that is what fits, when cuDNN cannot run it, or when a capture is under way and
// the choice has not run outside one yet (a plan is only made outside a capture); then the
// epilogue (bias, FusedConv's Z, Relu).
func (c *convCall) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	dev, err := acuda.StreamDevice(s)
	if err != nil {
		return err
	}
	var part alloc.CarvedPart
	if ws != nil {
		part, _ = ws.Part(convPart)
	}
	if convForceOwn {
		return c.own.exec(s, in, out, ws, nil)
	}
	k := dnnKey{dev, c.desc}
	p := lookupPlan(k)
	if p == nil {
		if _, capturing, err := dev.CaptureInfo(s); err != nil || capturing {
			return c.own.exec(s, in, out, ws, nil)
		}
		p = makePlan(k)
	}
	if p.p == nil {
		return c.own.exec(s, in, out, ws, nil)
	}
	r := p.rank.Load()
	i := r.first(part.Size)
	if j := convForceChoice; j >= 0 && j < len(r.choices) {
		if i = j; r.choices[i].ws > part.Size {
			return fmt.Errorf("cuda: %s: choice %d needs %d bytes of workspace, %d are carved", c.label, i, r.choices[i].ws, part.Size)
		}
	}
	if r.choices[i].own {
		return c.own.exec(s, in, out, ws, nil)
	}
	capturing := false
	if !r.warm[i].Load() {
		if _, capturing, err = dev.CaptureInfo(s); err != nil {
			return err
		}
		if capturing {
			return c.own.exec(s, in, out, ws, nil)
		}
	}
	ch := r.choices[i]
	raw, err := dev.RawStream(s)
	if err != nil {
		return err
	}
	x, y := in[0].Addr, out[0].Addr
	if c.desc.Backward {
		x, y = y, x
	}
	w := in[1].Addr
	// A Z in place of y (the engine gave output 0 input 3's bytes: kernels.InPlace): cuDNN adds
	// the Z that y holds, reading each element before it writes it, and the epilogue does the rest.
	blend, epi := 0, c.epi
	if c.sum && !c.desc.Backward && len(in) > 3 && in[3].Addr != 0 && in[3].Addr == out[0].Addr {
		blend, epi = 1, c.epiInPlace
	}
	err = dev.Do(func() error {
		p.h.mu.Lock()
		defer p.h.mu.Unlock()
		return dnnCheck(c.label+": cuDNN convolution", C.carve_dnn_run(p.h.h, p.p, C.int(ch.algo), C.int(ch.math),
			C.uintptr_t(x), C.uintptr_t(w), C.uintptr_t(y), C.uintptr_t(part.Ptr), C.uint64_t(part.Size), C.uintptr_t(raw), C.int(blend)))
	})
	if err != nil {
		return err
	}
	if !capturing {
		r.warm[i].Store(true)
	}
	return epi.exec(s, in, out, ws, nil)
}

// need is what the convolution needs of its "cudnn" part on b's device: the workspace of its
// fastest choice, measured (measurePlan), 0 when the own kernels are the fastest or cuDNN cannot
// run it. The need is at most the declared part, which is also what the choices fit.
func (c *convCall) need(b kernels.Backend, _ int64) (int64, error) {
	cb, ok := b.(*Backend)
	if !ok {
		return 0, fmt.Errorf("cuda: measuring %s needs the CUDA backend", c.label)
	}
	p := measurePlan(cb, c)
	if p.p == nil {
		return 0, nil
	}
	first := p.rank.Load().choices[0]
	if first.own {
		return 0, nil
	}
	return first.ws, nil
}

// prepare makes and measures the convolution's plan on b's device (measurePlan), outside any
// capture: Prepare's step.
func (c *convCall) prepare(b kernels.Backend) error {
	cb, ok := b.(*Backend)
	if !ok {
		return fmt.Errorf("cuda: preparing %s needs the CUDA backend", c.label)
	}
	measurePlan(cb, c)
	return nil
}

// Timing the own kernels beside cuDNN's algorithms: one warm-up run, then convTimedRuns timed.
const convTimedRuns = 3

// measurePlan returns c's plan on b's device ranked by measurement, once: cuDNN's Find runs
// every algorithm that fits the declared workspace on scratch buffers of the node's shapes,
// and the own kernels are timed on the same buffers (the epilogue kernel's time added to
// cuDNN's choices, which need it after them). The scratch is allocated here and freed before it
// returns; when it would take more than a quarter of the device's free memory, or a step fails,
// the heuristic's ranking stays.
func measurePlan(b *Backend, c *convCall) *dnnPlan {
	k := dnnKey{b.dev, c.desc}
	p := lookupPlan(k)
	if p == nil {
		p = makePlan(k)
	}
	if p.p == nil || p.rank.Load().measured {
		return p
	}
	dnnPlans.measure.Lock()
	defer dnnPlans.measure.Unlock()
	if p.rank.Load().measured {
		return p
	}
	if choices, err := measureChoices(b.dev, p, c); err == nil {
		p.rank.Store(newRank(choices, true))
	}
	return p
}

// scratch is device memory for a measurement, freed by free.
type scratch struct {
	dev  *acuda.Device
	ptrs []alloc.Ptr
}

func (s *scratch) alloc(n int64) (alloc.Ptr, error) {
	p, err := s.dev.Malloc(max(n, alloc.DefaultPartAlign))
	if err == nil {
		s.ptrs = append(s.ptrs, p)
	}
	return p, err
}

func (s *scratch) free() {
	for _, p := range s.ptrs {
		s.dev.Free(p)
	}
}

func measureChoices(dev *acuda.Device, p *dnnPlan, c *convCall) ([]dnnChoice, error) {
	d := c.desc
	es := d.DType.Size()
	xBytes := int64(d.N) * int64(d.C) * int64(d.H) * int64(d.W) * es
	yBytes := int64(d.N) * int64(d.K) * int64(d.P) * int64(d.Q) * es
	wBytes := int64(d.K) * int64(d.C/d.Groups) * int64(d.R) * int64(d.S) * es
	bBytes := int64(d.K) * es // the bias is over the node's output channels: y's, or x's backward
	if d.Backward {
		bBytes = int64(d.C) * es
	}
	zBytes := int64(0) // FusedConv's Z, the (forward) output's shape
	if c.sum {
		zBytes = yBytes
	}
	free, _, err := dev.MemInfo()
	if err != nil {
		return nil, err
	}
	if total := xBytes + yBytes + wBytes + bBytes + zBytes + d.WsCap; total > free/4 {
		return nil, fmt.Errorf("measuring needs %d bytes of scratch, %d are free", total, free)
	}
	sc := &scratch{dev: dev}
	defer sc.free()
	s, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	defer dev.DestroyStream(s)
	var x, w, y, bias, z, ws alloc.Ptr
	for _, a := range []struct {
		p    *alloc.Ptr
		n    int64
		zero bool
	}{{&x, xBytes, true}, {&w, wBytes, true}, {&y, yBytes, true}, {&bias, bBytes, true}, {&z, zBytes, c.sum}, {&ws, d.WsCap, false}} {
		if *a.p, err = sc.alloc(a.n); err != nil {
			return nil, err
		}
		if a.zero {
			if err := dev.MemsetBytes(*a.p, 0, a.n, s); err != nil {
				return nil, err
			}
		}
	}
	raw, err := dev.RawStream(s)
	if err != nil {
		return nil, err
	}
	var res [C.DNN_MAX_RESULTS]C.carve_dnn_choice
	var n C.int
	err = dev.Do(func() error {
		p.h.mu.Lock()
		defer p.h.mu.Unlock()
		return dnnCheck("cudnnFindConvolution*AlgorithmEx", C.carve_dnn_find(p.h.h, p.p, C.uintptr_t(raw),
			C.uintptr_t(x), C.uintptr_t(w), C.uintptr_t(y), C.uintptr_t(ws), C.uint64_t(d.WsCap), &res[0], &n))
	})
	if err != nil {
		return nil, err
	}
	choices := goChoices(res[:n])
	// the node's tensors over the scratch: input, weights, bias, Z; output
	nodeIn, nodeOut := x, y
	if d.Backward {
		nodeIn, nodeOut = y, x
	}
	in := []kernels.Tensor{{Addr: nodeIn}, {Addr: w}, {Addr: bias}, {Addr: z}}
	out := []kernels.Tensor{{Addr: nodeOut}}
	ownMs, err := timeProgram(dev, s, c.own, in, out)
	if err != nil {
		return nil, err
	}
	if len(c.epi) > 0 {
		epiMs, err := timeProgram(dev, s, c.epi, in, out)
		if err != nil {
			return nil, err
		}
		for i := range choices {
			choices[i].ms += epiMs
		}
	}
	sort.SliceStable(choices, func(i, j int) bool { return choices[i].ms < choices[j].ms })
	at := sort.Search(len(choices), func(i int) bool { return choices[i].ms > ownMs })
	choices = append(choices[:at], append([]dnnChoice{{own: true, ms: ownMs}}, choices[at:]...)...)
	if path := os.Getenv("CARVE_CONV_TIMES"); path != "" {
		if err := recordConvTimes(path, dev, c, choices); err != nil {
			// a diagnostic facility: the measurement stands, the record is lost and said so
			fmt.Fprintf(os.Stderr, "carve: CARVE_CONV_TIMES: %v\n", err)
		}
	}
	return choices, nil
}

var convTimesFile sync.Mutex // serializes the appends of recordConvTimes

// recordConvTimes appends c's measured choices to the conv-times file at path as one line of
// JSON (convRecord, convtimes.go).
func recordConvTimes(path string, dev *acuda.Device, c *convCall, choices []dnnChoice) error {
	p, err := dev.Properties()
	if err != nil {
		return err
	}
	names := fwdAlgoNames
	if c.desc.Backward {
		names = bwdAlgoNames
	}
	r := convRecord{Device: p.Name, Arch: fmt.Sprintf("sm_%d%d", p.Major, p.Minor), SMs: p.SMs, Cudnn: dnnLoad.version,
		Desc: c.desc, Epilogue: c.epilogue}
	for _, ch := range choices {
		what := "own"
		if !ch.own {
			what = fmt.Sprintf("cuDNN %s %s", nameOf(names, ch.algo), nameOf(mathNames, ch.math))
		}
		r.Choices = append(r.Choices, convTimed{What: what, Ws: ch.ws, Ms: float64(ch.ms)})
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	convTimesFile.Lock()
	defer convTimesFile.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// timeProgram is the milliseconds one run of pr takes on s, over convTimedRuns runs after a
// warm-up.
func timeProgram(dev *acuda.Device, s alloc.Stream, pr program, in, out []kernels.Tensor) (float32, error) {
	start, err := dev.NewTimingEvent()
	if err != nil {
		return 0, err
	}
	defer dev.DestroyEvent(start)
	end, err := dev.NewTimingEvent()
	if err != nil {
		return 0, err
	}
	defer dev.DestroyEvent(end)
	if err := pr.exec(s, in, out, nil, nil); err != nil {
		return 0, err
	}
	if err := dev.RecordEvent(start, s); err != nil {
		return 0, err
	}
	for range convTimedRuns {
		if err := pr.exec(s, in, out, nil, nil); err != nil {
			return 0, err
		}
	}
	if err := dev.RecordEvent(end, s); err != nil {
		return 0, err
	}
	if err := dev.SynchronizeEvent(end); err != nil {
		return 0, err
	}
	ms, err := dev.ElapsedMs(start, end)
	return ms / convTimedRuns, err
}

var (
	fwdAlgoNames = []string{"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"}
	bwdAlgoNames = []string{"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"}
	mathNames    = []string{"default", "tensor-op", "tensor-op-conversion", "fma"}
)

func nameOf(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprint(i)
}

// describe says what runs the convolution on b's device at its declared workspace: cuDNN's
// algorithm, or the own kernels and why.
func (c *convCall) describe(b kernels.Backend) string {
	cb, ok := b.(*Backend)
	if !ok {
		return "not on a CUDA backend"
	}
	if err := loadDnn(); err != nil {
		return "own: " + err.Error()
	}
	p := lookupPlan(dnnKey{cb.dev, c.desc})
	if p == nil {
		return "not planned yet (the first run or MeasureWorkspace plans it)"
	}
	r := p.rank.Load()
	how := "heuristic"
	if r.measured {
		how = "measured"
	}
	ch := r.choices[r.first(c.desc.WsCap)]
	if ch.own {
		why := p.why
		if why == "" {
			why = how + " faster than cuDNN's algorithms"
		}
		return "own: " + why
	}
	names := fwdAlgoNames
	if c.desc.Backward {
		names = bwdAlgoNames
	}
	return fmt.Sprintf("cuDNN %d %s, %s math, %d bytes of workspace (%s)", dnnLoad.version, nameOf(names, ch.algo),
		nameOf(mathNames, ch.math), ch.ws, how)
}

// closeDnn destroys dev's cuDNN plans and handle.
func closeDnn(dev *acuda.Device) error {
	dnnPlans.Lock()
	var ps []*C.carve_dnn_plan
	for k, p := range dnnPlans.m {
		if k.dev == dev {
			if p.p != nil {
				ps = append(ps, p.p)
			}
			delete(dnnPlans.m, k)
		}
	}
	dnnPlans.Unlock()
	dnnHandles.Lock()
	h := dnnHandles.m[dev]
	delete(dnnHandles.m, dev)
	dnnHandles.Unlock()
	if len(ps) == 0 && h == nil {
		return nil
	}
	var errs []error
	_ = dev.Do(func() error {
		for _, p := range ps {
			C.carve_dnn_plan_free(p)
		}
		if h != nil {
			errs = append(errs, dnnCheck("cudnnDestroy", C.carve_dnn_destroy(h.h)))
		}
		return nil
	})
	return errors.Join(errs...)
}
