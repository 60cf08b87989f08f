package ledger

import "syscall"

// mapPopulate asks Linux to map every page of the file at once: one
// call, rather than a fault per page as the reader reaches it.
const mapPopulate = syscall.MAP_POPULATE
