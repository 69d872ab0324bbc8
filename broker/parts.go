package broker

// The broker's parts, each holding only what it uses, built once by New.
// Broker keeps the OSB handlers and the methods the reconciler and the
// operator call; the work behind them is the parts':
//
//	directors       the Directors, each call asked again after transient faults, a task created once
//	history         the instance's history (and who asked: identities), the outcomes counted
//	locker          an instance's hold: its mutex, and with SharedLimits its lease
//	limiter         the plan's and service's limits and the new record's write, one step
//	recorder        an operation's marks on the record: started, its task, its failure
//	deployer        the one way to change what runs: preview and guard, back up, deploy
//	renderer        the manifests, from the plan's template, the secrets and the live bindings
//	bindingStore    the bindings' documents and their list
//	provisioner     provision and update
//	remover         deprovision: the deployment deleted, then the records
//	settler         last_operation and SettleOperation: an operation followed to its task
//	binder          bind and unbind, a per_binding plan's through a deploy
//	bindingSettler  a per_binding bind or unbind followed to its task
//	recoverer       lost bindings put back (RecoverBindings)
//	retirer         an orphan deployment's retirement
//	rotator         binding rotation, where brokerapi does not serve it
//
// A part never holds the Broker.

// assemble builds the Broker and its parts from opts, whose defaults are
// filled in.
func assemble(opts Options) *Broker {
	log := opts.Logger
	report := reporter{log: log}
	recs := records{store: opts.Store, report: report}
	dirs := &directors{all: opts.Directors, retries: opts.DirectorRetries, log: log}
	hist := &history{store: opts.Store, retention: opts.History, timeout: opts.DirectorTimeout, metrics: opts.Metrics,
		who: &identities{log: log}, log: log}
	locks := &locker{mutexes: newKeyedMutex(), leases: opts.SharedLimits, holderID: opts.HolderID,
		ttl: opts.InstanceLeaseTTL, wait: opts.InstanceLeaseWait, records: recs, report: report, log: log}
	limits := &limiter{leases: opts.SharedLimits, holderID: opts.HolderID, store: opts.Store, metrics: opts.Metrics,
		report: report, log: log}
	ops := &recorder{store: opts.Store, dirs: dirs, history: hist, report: report, log: log}
	deploy := &deployer{store: opts.Store, dirs: dirs, ops: ops, history: hist, report: report, log: log}
	bindings := &bindingStore{secrets: opts.Store, report: report}
	render := &renderer{catalog: opts.Catalog, secrets: opts.Store, bindings: bindings, report: report, log: log}
	remove := &remover{store: opts.Store, dirs: dirs, ops: ops, deploy: deploy, history: hist, locks: locks,
		report: report, log: log}
	bindOps := &bindingSettler{catalog: opts.Catalog, store: opts.Store, bindings: bindings, dirs: dirs, deploy: deploy,
		metrics: opts.Metrics, lostTaskGrace: opts.LostTaskGrace, report: report, log: log}
	bind := &binder{catalog: opts.Catalog, store: opts.Store, records: recs, dirs: dirs, bindings: bindings, render: render,
		deploy: deploy, ops: bindOps, history: hist, metrics: opts.Metrics, timeout: opts.DirectorTimeout, report: report, log: log}
	return &Broker{
		opts:     opts,
		log:      log,
		report:   report,
		records:  recs,
		locks:    locks,
		limits:   limits,
		ops:      ops,
		history:  hist,
		bindings: bindings,
		render:   render,
		provision: &provisioner{catalog: opts.Catalog, store: opts.Store, dirs: dirs, render: render, deploy: deploy,
			limits: limits, history: hist, timeout: opts.DirectorTimeout, report: report, log: log},
		remove: remove,
		settle: &settler{store: opts.Store, records: recs, dirs: dirs, ops: ops, deploy: deploy, remove: remove, history: hist,
			shared: opts.SharedLimits != nil, lostTaskGrace: opts.LostTaskGrace, rememberDeleted: opts.RememberDeleted,
			errands: &postDeploy{catalog: opts.Catalog, dirs: dirs, ops: ops, remove: remove, history: hist, log: log},
			report:  report, log: log},
		bind:    bind,
		bindOps: bindOps,
		recovery: &recoverer{catalog: opts.Catalog, store: opts.Store, locks: locks, bindings: bindings, binder: bind,
			history: hist, log: log},
		retire: &retirer{store: opts.Store, locks: locks, dirs: dirs, ops: ops, deploy: deploy, remove: remove, history: hist,
			now: opts.Now, timeout: opts.DirectorTimeout, log: log},
		rotate: &rotator{catalog: opts.Catalog, store: opts.Store, limits: opts.Limits, report: report},
	}
}
