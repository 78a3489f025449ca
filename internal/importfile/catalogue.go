package importfile

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/posgate/posgate"
)

// ProductItem is an item of a products import body (docs/api.md §17.1);
// unknown properties are ignored.
type ProductItem struct {
	ProductID         string          `json:"productId"`
	ProductName       string          `json:"productName"`
	ProductCategoryID string          `json:"productCategoryId"`
	ProductCategory   string          `json:"productCategory"`
	Manufacturer      string          `json:"manufacturer"`
	Price             posgate.Decimal `json:"price"`
}

// plainProductItem is ProductItem without its decoding method, for the
// reflective decoder's errors (see importItem).
type plainProductItem ProductItem

// UnmarshalJSONFrom reads an item token by token, as importItem does and
// for the same reason (100,000 items per request); a value of the wrong
// kind goes to the reflective decoder for the usual message.
func (it *ProductItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '{' {
		return readOther(dec, (*plainProductItem)(it))
	}
	return readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "productId":
			it.ProductID, err = readString(dec)
		case "productName":
			it.ProductName, err = readString(dec)
		case "productCategoryId":
			it.ProductCategoryID, err = readString(dec)
		case "productCategory":
			it.ProductCategory, err = readString(dec)
		case "manufacturer":
			it.Manufacturer, err = readString(dec)
		case "price":
			it.Price, err = readDecimal(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// readDecimal reads a number as its text (null: absent).
func readDecimal(dec *jsontext.Decoder) (posgate.Decimal, error) {
	switch dec.PeekKind() {
	case '0':
		raw, err := dec.ReadValue()
		return posgate.Decimal(raw), err
	case 'n':
		_, err := dec.ReadValue()
		return "", err
	}
	var f float64
	return "", readOther(dec, &f)
}

// CategoryItem is an item of a categories import body (docs/api.md §17.2).
type CategoryItem struct {
	Name                       string `json:"name"`
	PosProductParentCategoryID string `json:"posProductParentCategoryId"`
	PosProductCategoryID       string `json:"posProductCategoryId"`
	PosCatalogID               string `json:"posCatalogId"`
}

// plainCategoryItem is CategoryItem without its decoding method (see
// plainProductItem).
type plainCategoryItem CategoryItem

// UnmarshalJSONFrom reads an item token by token (see ProductItem).
func (it *CategoryItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '{' {
		return readOther(dec, (*plainCategoryItem)(it))
	}
	return readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "name":
			it.Name, err = readString(dec)
		case "posProductParentCategoryId":
			it.PosProductParentCategoryID, err = readString(dec)
		case "posProductCategoryId":
			it.PosProductCategoryID, err = readString(dec)
		case "posCatalogId":
			it.PosCatalogID, err = readString(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// Product returns the item as the checker takes it.
func (it *ProductItem) Product() *posgate.ProductItem {
	return &posgate.ProductItem{ProductID: it.ProductID, ProductName: it.ProductName, ProductCategoryID: it.ProductCategoryID,
		ProductCategory: it.ProductCategory, Manufacturer: it.Manufacturer, Price: it.Price}
}

// Category returns the item as the checker takes it.
func (it *CategoryItem) Category() *posgate.CategoryItem {
	return &posgate.CategoryItem{Name: it.Name, PosProductParentCategoryID: it.PosProductParentCategoryID,
		PosProductCategoryID: it.PosProductCategoryID, PosCatalogID: it.PosCatalogID}
}
