// The CUDA driver API as this package calls it: libs/alloc/cuda's driver.h, carve's one table
// of driver entry points (dlopen'd from libcuda.so.1, so the binary does not link libcuda),
// read here through carve_kcu, a pointer to that table which cudriver_cuda.go sets from
// acuda.DriverTable before the first module load. cgo's C names are per package, so the table
// is shared as a pointer handed over in Go; nothing of the driver is declared here. Included
// by the package's cuda-tagged cgo files only (with -I to libs/alloc/cuda: #cgo CFLAGS in
// cudriver_cuda.go, //libs/alloc/cuda:driver_h in Bazel).
//
// Every call through the table happens after loadDriver succeeded: launches and module lookups
// go through moduleOf, which loads it first.
#ifndef CARVE_KERNELS_CUDA_CUDRIVER_H
#define CARVE_KERNELS_CUDA_CUDRIVER_H

// The table's pointer, defined in cudriver_cuda.go; driver.h's wrappers call through it.
struct carve_cu_table;
extern struct carve_cu_table *carve_kcu;
#define CARVE_CU (*carve_kcu)
#include "driver.h"

#endif
