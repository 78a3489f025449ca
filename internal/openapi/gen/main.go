// Command gen writes internal/openapi/openapi.json from openapi.yaml (run
// by go generate in that directory): after a change to the YAML,
//
//	go generate ./internal/openapi
package main

import (
	"fmt"
	"os"

	"github.com/posgate/posgate/internal/openapi/openapigen"
)

func main() {
	yaml, err := os.ReadFile("openapi.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	out, err := openapigen.Convert(yaml)
	if err == nil {
		err = os.WriteFile("openapi.json", out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
