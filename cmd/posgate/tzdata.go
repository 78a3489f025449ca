package main

// The IANA time-zone database is part of the binary, so that the time
// zones of companies and locations (docs/api.md §1.3) load wherever posgate
// runs: the container image is FROM scratch, with no /usr/share/zoneinfo.
// It adds about 450 kB.
import _ "time/tzdata"
