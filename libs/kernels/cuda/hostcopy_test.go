package cuda

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostCopy: hostCopy copies every byte at sizes around its part size, into a destination
// longer than the source too, and allocates nothing.
func TestHostCopy(t *testing.T) {
	for _, n := range []int{0, 1, hostCopyPart - 1, hostCopyPart, hostCopyPart + 1, 3*hostCopyPart + 17, 8 * hostCopyPart} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*7 + i>>11)
		}
		dst := make([]byte, n+5)
		for i := range dst {
			dst[i] = 0xAA
		}
		hostCopy(dst, src)
		require.True(t, bytes.Equal(dst[:n], src), "size %d", n)
		require.Equal(t, bytes.Repeat([]byte{0xAA}, 5), dst[n:], "size %d: bytes past the source untouched", n)
	}
	src, dst := make([]byte, 5*hostCopyPart), make([]byte, 5*hostCopyPart)
	hostCopy(dst, src) // the pool and the free list warm
	require.Zero(t, testing.AllocsPerRun(20, func() { hostCopy(dst, src) }))
}
