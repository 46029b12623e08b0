//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <cublasLt.h>

// cuBLASLt is loaded at run time: binaries are built against CUDA 12.4's headers and run on
// hosts with CUDA 13's libcublasLt.so.13 (or 12's). The entry points used here kept their
// signatures and enum values across those versions.
static struct {
	void *lib;
	__typeof__(&cublasLtCreate) create;
	__typeof__(&cublasLtDestroy) destroy;
	__typeof__(&cublasLtGetVersion) version;
	__typeof__(&cublasLtMatmulDescCreate) descCreate;
	__typeof__(&cublasLtMatmulDescDestroy) descDestroy;
	__typeof__(&cublasLtMatmulDescSetAttribute) descSet;
	__typeof__(&cublasLtMatrixLayoutCreate) layoutCreate;
	__typeof__(&cublasLtMatrixLayoutDestroy) layoutDestroy;
	__typeof__(&cublasLtMatrixLayoutSetAttribute) layoutSet;
	__typeof__(&cublasLtMatmulPreferenceCreate) prefCreate;
	__typeof__(&cublasLtMatmulPreferenceDestroy) prefDestroy;
	__typeof__(&cublasLtMatmulPreferenceSetAttribute) prefSet;
	__typeof__(&cublasLtMatmulAlgoGetHeuristic) heuristic;
	__typeof__(&cublasLtMatmul) matmul;
} lt;

// carve_lt_load opens the library; it returns NULL or a static message naming what failed.
static const char *carve_lt_load(void) {
	static const char *libs[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
	for (int i = 0; i < 3 && lt.lib == NULL; i++) lt.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (lt.lib == NULL) return "libcublasLt.so.13 (or .12) not found on the library path";
#define SYM(f, name) if ((*(void **)&lt.f = dlsym(lt.lib, name)) == NULL) return "symbol " name " missing in libcublasLt";
	SYM(create, "cublasLtCreate")
	SYM(destroy, "cublasLtDestroy")
	SYM(version, "cublasLtGetVersion")
	SYM(descCreate, "cublasLtMatmulDescCreate")
	SYM(descDestroy, "cublasLtMatmulDescDestroy")
	SYM(descSet, "cublasLtMatmulDescSetAttribute")
	SYM(layoutCreate, "cublasLtMatrixLayoutCreate")
	SYM(layoutDestroy, "cublasLtMatrixLayoutDestroy")
	SYM(layoutSet, "cublasLtMatrixLayoutSetAttribute")
	SYM(prefCreate, "cublasLtMatmulPreferenceCreate")
	SYM(prefDestroy, "cublasLtMatmulPreferenceDestroy")
	SYM(prefSet, "cublasLtMatmulPreferenceSetAttribute")
	SYM(heuristic, "cublasLtMatmulAlgoGetHeuristic")
	SYM(matmul, "cublasLtMatmul")
#undef SYM
	return NULL;
}

static size_t carve_lt_version(void) { return lt.version(); }
static int carve_lt_create(cublasLtHandle_t *h) { return lt.create(h); }
static int carve_lt_destroy(cublasLtHandle_t h) { return lt.destroy(h); }

// carve_gemm describes one (strided, batched) column-major GEMM D = alpha*op(A)op(B) + beta*C
// with fp32 accumulation; C and D share a layout.
typedef struct {
	int dtype;            // cudaDataType_t of A, B, C, D
	int transa, transb;   // CUBLAS_OP_N / CUBLAS_OP_T
	uint64_t m, n, k;     // D is m x n
	int64_t lda, ldb, ldc;
	int32_t batch;
	int64_t sa, sb, sc;   // batch strides in elements (0: broadcast)
	uint32_t align[4];    // byte alignment of A, B, C, D (pointers and strides), at most 256
	uint64_t wsCap;       // the most workspace an algorithm may use
	int pick;             // 0: the heuristic's best; >0: the best that uses workspace, among pick results
	int index;            // tests: >0 takes the heuristic's result index - 1 (when it is usable)
	uint64_t bias;        // nonzero: the device address of an m-vector of D's type that the bias
	                      // epilogue adds to every column of D (part of the plan: a weight's address)
} carve_gemm;

// carve_plan is a carve_gemm's descriptors and chosen algorithm.
typedef struct {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t a, b, c;
	cublasLtMatmulAlgo_t algo;
	size_t wsNeed;
} carve_plan;

static void carve_plan_free(carve_plan *p) {
	if (p->desc) lt.descDestroy(p->desc);
	if (p->a) lt.layoutDestroy(p->a);
	if (p->b) lt.layoutDestroy(p->b);
	if (p->c) lt.layoutDestroy(p->c);
	free(p);
}

static int carve_layout(cublasLtMatrixLayout_t *l, int dtype, uint64_t rows, uint64_t cols, int64_t ld, int32_t batch, int64_t stride) {
	int r = lt.layoutCreate(l, (cudaDataType_t)dtype, rows, cols, ld);
	if (r) return r;
	if (batch > 1) {
		if ((r = lt.layoutSet(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch))) return r;
		if ((r = lt.layoutSet(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride))) return r;
	}
	return 0;
}

// carve_plan_new builds g's descriptors and asks the heuristic for an algorithm; *out is NULL
// when it fails. The status is a cublasStatus_t; -1 means no algorithm fits.
static int carve_plan_new(cublasLtHandle_t h, const carve_gemm *g, carve_plan **out) {
	*out = NULL;
	carve_plan *p = calloc(1, sizeof *p);
	int r;
	cublasLtMatmulPreference_t pref = NULL;
	if ((r = lt.descCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F))) goto fail;
	cublasOperation_t ta = g->transa, tb = g->transb;
	if ((r = lt.descSet(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta))) goto fail;
	if ((r = lt.descSet(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb))) goto fail;
	if (g->bias) {
		cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
		const void *bias = (const void *)(uintptr_t)g->bias;
		if ((r = lt.descSet(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi))) goto fail;
		if ((r = lt.descSet(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias))) goto fail;
	}
	uint64_t ar = ta == CUBLAS_OP_N ? g->m : g->k, ac = ta == CUBLAS_OP_N ? g->k : g->m;
	uint64_t br = tb == CUBLAS_OP_N ? g->k : g->n, bc = tb == CUBLAS_OP_N ? g->n : g->k;
	if ((r = carve_layout(&p->a, g->dtype, ar, ac, g->lda, g->batch, g->sa))) goto fail;
	if ((r = carve_layout(&p->b, g->dtype, br, bc, g->ldb, g->batch, g->sb))) goto fail;
	if ((r = carve_layout(&p->c, g->dtype, g->m, g->n, g->ldc, g->batch, g->sc))) goto fail;
	if ((r = lt.prefCreate(&pref))) goto fail;
	uint64_t cap = g->wsCap;
	if ((r = lt.prefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &cap, sizeof cap))) goto fail;
	for (int i = 0; i < 4; i++) {
		uint32_t a = g->align[i];
		if ((r = lt.prefSet(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i, &a, sizeof a))) goto fail;
	}
	cublasLtMatmulHeuristicResult_t res[16];
	int want = g->pick > 0 ? (g->pick < 16 ? g->pick : 16) : 1, got = 0;
	if (g->index > want) want = g->index < 16 ? g->index : 16;
	if ((r = lt.heuristic(h, p->desc, p->a, p->b, p->c, p->c, pref, want, res, &got))) goto fail;
	int chosen = -1;
	if (g->index > 0) {
		if (g->index <= got && res[g->index - 1].state == CUBLAS_STATUS_SUCCESS) chosen = g->index - 1;
	} else {
		for (int i = 0; i < got && chosen < 0; i++) {
			if (res[i].state == CUBLAS_STATUS_SUCCESS && (g->pick == 0 || res[i].workspaceSize > 0)) chosen = i;
		}
	}
	if (chosen < 0) { r = -1; goto fail; }
	p->algo = res[chosen].algo;
	p->wsNeed = res[chosen].workspaceSize;
	lt.prefDestroy(pref);
	*out = p;
	return 0;
fail:
	if (pref) lt.prefDestroy(pref);
	carve_plan_free(p);
	return r;
}

// carve_plan_run queues the GEMM on s with the given workspace.
static int carve_plan_run(cublasLtHandle_t h, carve_plan *p, float alpha, float beta,
		uintptr_t A, uintptr_t B, uintptr_t C, uintptr_t D, uintptr_t ws, uint64_t wsSize, uintptr_t s) {
	return lt.matmul(h, p->desc, &alpha, (const void *)A, p->a, (const void *)B, p->b, &beta,
		(const void *)C, p->c, (void *)D, p->c, &p->algo, (void *)ws, wsSize, (cudaStream_t)s);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
)

// BlasError is a cuBLAS status other than success.
type BlasError struct {
	Call   string
	Status int
}

func (e *BlasError) Error() string {
	return fmt.Sprintf("cuda: %s: cuBLAS status %d", e.Call, e.Status)
}

func blasCheck(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return &BlasError{Call: call, Status: int(r)}
}

var ltLoad struct {
	once sync.Once
	err  error
}

// loadBlas opens cuBLASLt once per process.
func loadBlas() error {
	ltLoad.once.Do(func() {
		if msg := C.carve_lt_load(); msg != nil {
			ltLoad.err = fmt.Errorf("cuda: loading cuBLASLt: %s", C.GoString(msg))
		}
	})
	return ltLoad.err
}

// BlasVersion is the loaded cuBLASLt's version (for example 130100), loading it if needed.
func BlasVersion() (int, error) {
	if err := loadBlas(); err != nil {
		return 0, err
	}
	return int(C.carve_lt_version()), nil
}

// ltHandleKey names one cuBLASLt handle: one per (device, stream).
type ltHandleKey struct {
	dev *acuda.Device
	s   alloc.Stream
}

var ltHandles struct {
	sync.RWMutex
	m map[ltHandleKey]C.cublasLtHandle_t
}

// handleFor returns the cuBLASLt handle of (dev, s), creating it on first use. Call it with
// dev's context current.
func handleFor(dev *acuda.Device, s alloc.Stream) (C.cublasLtHandle_t, error) {
	k := ltHandleKey{dev, s}
	ltHandles.RLock()
	h, ok := ltHandles.m[k]
	ltHandles.RUnlock()
	if ok {
		return h, nil
	}
	return newHandle(k)
}

// newHandle is handleFor's miss: the only path that allocates.
func newHandle(k ltHandleKey) (C.cublasLtHandle_t, error) {
	if err := loadBlas(); err != nil {
		return nil, err
	}
	ltHandles.Lock()
	defer ltHandles.Unlock()
	if h, ok := ltHandles.m[k]; ok {
		return h, nil
	}
	var h C.cublasLtHandle_t
	if err := blasCheck("cublasLtCreate", C.carve_lt_create(&h)); err != nil {
		return nil, err
	}
	if ltHandles.m == nil {
		ltHandles.m = map[ltHandleKey]C.cublasLtHandle_t{}
	}
	ltHandles.m[k] = h
	return h, nil
}

// closeBlas destroys dev's ltHandles and the GEMM ltPlans made for it.
func closeBlas(dev *acuda.Device) error {
	ltHandles.Lock()
	var hs []C.cublasLtHandle_t
	for k, h := range ltHandles.m {
		if k.dev == dev {
			hs = append(hs, h)
			delete(ltHandles.m, k)
		}
	}
	ltHandles.Unlock()
	var errs []error
	_ = dev.Do(func() error {
		for _, h := range hs {
			errs = append(errs, blasCheck("cublasLtDestroy", C.carve_lt_destroy(h)))
		}
		return nil
	})
	errs = append(errs, ltPlans.drop(dev))
	return errors.Join(errs...)
}

// gemmDesc is one column-major GEMM as cuBLASLt takes it (see carve_gemm).
type gemmDesc = C.carve_gemm

// ltPlan is a gemmDesc's cuBLASLt descriptors and algorithm for one device, or, for a GEMM
// with a bias epilogue (which runs another way when cuBLASLt has none), why there is none.
type ltPlan struct {
	p      *C.carve_plan
	wsNeed int64
	err    error // p is nil; cached for bias-epilogue GEMMs only
}

// ltPlanKey names a plan: the device, the GEMM and the pointer alignments the algorithm may
// assume.
type ltPlanKey struct {
	dev *acuda.Device
	g   gemmDesc
}

// ltPlans caches ltPlans: the heuristic runs once per (device, GEMM, alignments), so the steady
// state neither queries cuBLASLt nor allocates.
var ltPlans ltPlanCache

type ltPlanCache struct {
	mu sync.RWMutex
	m  map[ltPlanKey]ltPlan
}

// get returns the ltPlan of g on dev, made on first use with h. Call it with dev's context
// current. Only a miss allocates.
func (c *ltPlanCache) get(dev *acuda.Device, h C.cublasLtHandle_t, g gemmDesc) (ltPlan, error) {
	k := ltPlanKey{dev, g}
	c.mu.RLock()
	p, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return p, p.err
	}
	return c.make(k, h)
}

func (c *ltPlanCache) make(k ltPlanKey, h C.cublasLtHandle_t) (ltPlan, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[k]; ok {
		return p, p.err
	}
	if c.m == nil {
		c.m = map[ltPlanKey]ltPlan{}
	}
	g := k.g
	var cp *C.carve_plan
	if r := C.carve_plan_new(h, &g, &cp); r != 0 {
		var err error
		if r == -1 {
			err = fmt.Errorf("cuda: cuBLASLt has no algorithm for a %dx%dx%d GEMM (type %d, batch %d, bias epilogue %v) within %d bytes of workspace",
				g.m, g.n, g.k, g.dtype, g.batch, g.bias != 0, g.wsCap)
		} else {
			err = blasCheck("cuBLASLt matmul setup", r)
		}
		if g.bias != 0 { // the caller falls back to a GEMM without the epilogue: ask once
			c.m[k] = ltPlan{err: err}
		}
		return ltPlan{}, err
	}
	p := ltPlan{p: cp, wsNeed: int64(cp.wsNeed)}
	c.m[k] = p
	return p, nil
}

func (c *ltPlanCache) drop(dev *acuda.Device) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.m {
		if k.dev == dev {
			if p.p != nil {
				C.carve_plan_free(p.p)
			}
			delete(c.m, k)
		}
	}
	return nil
}

// runPlan queues p on s. ws is the invocation's own workspace.
func runPlan(h C.cublasLtHandle_t, p ltPlan, alpha, beta float32, a, b, c, d alloc.Ptr, ws alloc.Region, raw uintptr) error {
	return blasCheck("cublasLtMatmul", C.carve_plan_run(h, p.p, C.float(alpha), C.float(beta),
		C.uintptr_t(a), C.uintptr_t(b), C.uintptr_t(c), C.uintptr_t(d), C.uintptr_t(ws.Ptr), C.uint64_t(ws.Size), C.uintptr_t(raw)))
}

var _ = unsafe.Pointer(nil)
