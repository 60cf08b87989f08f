package ghmirror

import "os"

var osRemove = os.Remove
