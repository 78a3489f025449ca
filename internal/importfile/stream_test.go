package importfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/importfile"
)

// TestStream: a file is an array of items or an import body, read alike;
// a malformed one is refused with the decoder's path.
func TestStream(t *testing.T) {
	for name, body := range map[string]string{
		"array":      "\ufeff \n[{\"productId\":\"A\"},{\"productId\":\"B\",\"price\":2.5}]",
		"importBody": `{"items":[{"productId":"A"},{"productId":"B","price":2.5}]}`,
	} {
		var got []string
		err := importfile.Stream(strings.NewReader(body), func(i int, it *importfile.ProductItem) error {
			got = append(got, it.ProductID+":"+string(it.Price))
			return nil
		})
		if err != nil || strings.Join(got, ",") != "A:,B:2.5" {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
	err := importfile.Stream(strings.NewReader(`[{"productId":1}]`), func(int, *importfile.ProductItem) error { return nil })
	var pe *posgate.Error
	if !errors.As(err, &pe) || pe.Fields["items[0].productId"] == nil {
		t.Fatalf("a number as the id: %v", err)
	}
}
