// Package importfile reads the items of the imports (docs/api.md §9, §17):
// the JSON item decoders of the POS API's import bodies, shared by the HTTP
// adapter and the portal's uploads, and the CSV files of the command line
// and the portal, converted to the same bodies.
package importfile
