#!/usr/bin/env python

# Copyright 2025 The npyio Authors. All rights reserved.
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file.

from __future__ import print_function
import numpy as np

## S6
for order in ["f", "c"]:
    fname = "testdata/data_s6_scalar_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array("hello", dtype="|S6", order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_s6_1x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array("hello", dtype="|S6").reshape(1,1, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_s6_2x3_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["0", "1", "2", "3", "4", "5"], dtype="|S6").reshape(2,3, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_s6_4x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["one", "two", "three", "four"], dtype="|S6").reshape(4,1, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_s6_3x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["hello", "world", "!"], dtype="|S6").reshape(3,1, order=order)
    np.save(fname, arr)
    pass

## U6
for order in ["f", "c"]:
    fname = "testdata/data_u6_scalar_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array("äëïöü", dtype="<U6", order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_u6_1x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array("äëïöü", dtype="<U6").reshape(1,1, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_u6_2x3_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["0·", "1·", "2·", "3·", "4·", "5·"], dtype="<U6").reshape(2,3, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_u6_4x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["one¹", "two²", "three³", "four⁴"], dtype="<U6").reshape(4,1, order=order)
    np.save(fname, arr)
    pass

for order in ["f", "c"]:
    fname = "testdata/data_u6_3x1_%sorder.npy" % order
    print(">>> %s" % fname)
    arr = np.array(["hello", "äëïöüÿ", "!"], dtype="<U6").reshape(3,1, order=order)
    np.save(fname, arr)
    pass

## structs
for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, 'a', 2.2),
                    (2, 'b', 4.4),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '|S1'), ('F3', '<f4')], align=aligned),
                order=order,
                )
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-2x1-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, 'a', 2.2),
                    (2, 'b', 4.4),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '|S1'), ('F3', '<f4')], align=aligned),
                order=order,
                ).reshape(2,1)
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-u2-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, "áà", 2.2),
                    (2, "éè", 4.4),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '<U2'), ('F3', '<f4')], align=aligned),
                order=order,
                )
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/nested-struct-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, (2, 'a'), 3.1),
                    (2, (3, 'z'), 4.1),
                ],
                dtype=np.dtype([('F01', '<u4'), ('F02', [('F11', '<u2'), ('F12', '|S1')]), ('F03', '<f4')], align=aligned),
                order=order,
                )
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/nested-struct-subarr-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, (2, 'a', [[1,2,3], [4,5,6]]), 3.1),
                    (2, (3, 'z', [[2,4,6], [8,10,12]]), 4.1),
                ],
                dtype=np.dtype([('F01', '<u4'), ('F02', [('F11', '<u2'), ('F12', '|S1'), ('F13', '<f4', (2,3))]), ('F03', '<f4')], align=aligned),
                order=order,
                )
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/nested-subarr-struct-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, [[(2, 'a', [[1,2,3], [4,5,6]])], [(3, 'b', [[2,3,4], [5,6,7]])]], 3.1),
                    (2, [[(3, 'z', [[2,4,6], [8,10,12]])], [(4, 'y', [[3, 4, 5],[6,7,8]])]], 4.1),
                ],
                dtype=np.dtype([('F01', '<u4'), ('F02', [('F11', '<u2'), ('F12', '|S1'), ('F13', '<f4', (2,3))], (2,1)), ('F03', '<f4')], align=aligned),
                order=order,
                )
        np.save(fname, arr)

for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-subarr-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, 'a', [[1,2,3],[4,5,6]], -1),
                    (2, 'b', [[2,4,6],[8,10,12]], -2),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '|S1'), ('F3', '<f4', (2,3)), ('F4', '<i2')], align=aligned),
                order=order,
                )
        np.save(fname, arr)


for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-subarr-s2x3-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, 'a', [['a','b','c'],['d','e','f']], -1),
                    (2, 'b', [['g','h','i'],['i','j','k']], -2),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '|S1'), ('F3', '|S1', (2,3)), ('F4', '<i2')], align=aligned),
                order=order,
                )
        np.save(fname, arr)


for order in ["f", "c"]:
    for aligned in [True, False]:
        fname = "testdata/struct-subarr-U2x3-aligned-%d_%sorder.npy" % (aligned, order)
        print(">>> %s" % fname)
        arr = np.array(
                [
                    (1, 'a', [["1·", "2·", "3·"],["4·", "5·", "6·"]], -1),
                    (2, 'b', [["2·", "3·", "4·"],["5·", "6·", "7·"]], -2),
                ],
                dtype=np.dtype([('F1', '<u4'), ('F2', '|S1'), ('F3', '|U2', (2,3)), ('F4', '<i2')], align=aligned),
                order=order,
                )
        np.save(fname, arr)
