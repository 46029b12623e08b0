// Command digest prints the digest of a workspace's module files, for tools/vendor.sh.
package main

import (
	"fmt"
	"os"

	"carve.dev/tools/depcheck"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, err := depcheck.ModuleFiles(root)
	if err == nil {
		var d string
		if d, err = depcheck.Digest(root, files); err == nil {
			fmt.Println(d)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "digest:", err)
	os.Exit(1)
}
