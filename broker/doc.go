// Package broker serves the Open Service Broker API (through brokerapi/v11)
// for the services and plans of the catalog, on top of the BOSH Director
// (deployments and tasks) and Vault (the broker's records, manifests and
// secrets). It serves /v2/* only: the operator's endpoints (/b/reconcile,
// /metrics, /healthz) are package operator's. The daemon mounts
// /b/reconcile next to Handler, behind the same credentials and counted in
// the same request metrics (Broker.Observe).
//
// Every answer reaches the platform in the spec's shape (shapeAnswers,
// around brokerapi and whatever answers before it): every error one object
// {"error": code, "description": sentence}, never Go's error text; a
// request body read as JSON whatever its Content-Type says; and
// last_operation's answers with what brokerapi's types cannot carry
// (pollHints): Retry-After while an operation is in progress (the plan's
// polling_interval, longer as it runs), instance_usable and
// update_repeatable once an update or a deprovision failed. The catalog
// says plan_updateable per plan (an instance of it may move to another
// plan: one is updatable), and a provision's, update's and fetch's answer
// name the plan's maintenance_info version among the instance's metadata
// labels (maintenance_info_version).
//
// Every operation keeps what the platform user is told (the OSB description)
// apart from what the operator's log gets (the error chain): a failure is
// logged once with its detail and answered with a short, useful sentence.
//
// Provision, update and deprovision are asynchronous. Each writes the
// instance's record, with its LastOperation (type, "in progress", the BOSH
// context id and later the task id), to Vault before it answers, so that
// last_operation can answer from Vault and the Director after a restart.
// SettleOperation takes an operation as far as last_operation would, for
// the reconciler, when the platform stopped asking.
//
// Broker holds the OSB handlers and the methods the reconciler and the
// operator call (SettleOperation, HoldInstance, RenderManifest, RenderHeld,
// RecoverBindings and the retirement's steps); each reads top to bottom and
// hands the work to the broker's parts (parts.go), each a type of one
// concern holding only what it uses, none holding the Broker: locker (an
// instance's hold), limiter, recorder (an operation's marks on the record),
// deployer (the one way to change what runs: preview and guard, back up,
// deploy), renderer, bindingStore, provisioner, remover, settler (and
// postDeploy: a plan's lifecycle errands, post-deploy ones run after a
// provision's or an update's deploy, pre-delete ones before a
// deprovision's deletion, the operation in progress until the last exits
// 0),
// binder, bindingSettler, recoverer, retirer, rotator, history and
// directors.
//
// What the broker did is appended to the instance's history in Vault (Actor
// "broker"): provision, update and deprovision when accepted, bind and
// unbind, and each operation's outcome (operation_succeeded,
// operation_failed) with the description the platform sees. Events name
// ids, plans and tasks, never parameters or credentials; a failure to append
// one is logged and changes no answer. The history outlives the instance.
package broker
