package reconciler

import (
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
)

type (
	// UnhealthyInstance is an instance whose VMs do not all run, since when.
	UnhealthyInstance = health.Entry
	// UnhealthyVM is a VM of an unhealthy instance, as the Director describes it.
	UnhealthyVM = health.VM
)
