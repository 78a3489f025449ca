// Command writedoc writes the OpenAPI document exactly as posgate serves it
// at /swagger/v1/swagger.json, for the given public addresses, so that a
// standard OpenAPI linter can check the served document and not the YAML
// template (whose {base_url} placeholders are not valid URLs). CI runs it
// before the linter (.ci/run):
//
//	go run ./internal/openapi/writedoc -o /tmp/swagger.json
//
// The default addresses stand for a real deployment's --base-url and
// --auth-url; they use the reserved .test domain, because a linter rightly
// flags example.com and localhost as placeholders.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/posgate/posgate/internal/openapi"
)

func main() {
	base := flag.String("base-url", "https://pos.posgate.test", "the service's public address ({base_url})")
	auth := flag.String("auth-url", "https://id.posgate.test", "the identity provider's public address ({auth_url})")
	out := flag.String("o", "", "write to this file instead of standard output")
	flag.Parse()
	if err := run(*base, *auth, *out); err != nil {
		fmt.Fprintln(os.Stderr, "writedoc:", err)
		os.Exit(1)
	}
}

func run(base, auth, out string) error {
	doc, err := openapi.Document(base, auth)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
