// oaclint runs the Olares platform's own chart validator over chart folders, exactly as `olares-cli chart lint`
// does: oac.Lint(dir, oac.WithAutoOwnerScenarios()) (beclab/Olares cli/cmd/ctl/chart/lint.go).
//
// Usage: oaclint DIR...   Prints "DIR: ok" or "DIR: <the validator's error>" per folder; exits 1 when any failed,
// 2 on a usage error. `catalog check` reads this output (generator/adapters/oac.py).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/beclab/Olares/framework/oac"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: oaclint CHART_DIR...")
		os.Exit(2)
	}
	failed := false
	for _, dir := range os.Args[1:] {
		if err := oac.Lint(dir, oac.WithAutoOwnerScenarios()); err != nil {
			failed = true
			fmt.Printf("%s: %s\n", dir, strings.Join(strings.Fields(err.Error()), " "))
			continue
		}
		fmt.Printf("%s: ok\n", dir)
	}
	if failed {
		os.Exit(1)
	}
}
