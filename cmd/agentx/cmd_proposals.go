package main

import (
	"context"

	"github.com/agentx-cli/agentx/evaluate"
	"github.com/agentx-cli/agentx/router"
)

// afterFailure looks for a pattern once an attempt did not pass.
func (a *app) afterFailure(ctx context.Context, h *router.Hub, issue int, at *evaluate.Attempt) {}
