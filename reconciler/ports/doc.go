// Package ports declares the systems outside the reconciler as the
// reconciler uses them: the BOSH Directors (Director, Tasks, Health,
// Deployer, and NamedDirector, one configured Director with them), the
// broker (Operations, Renderer), the notifier (Notifier) and the platform
// (PlatformReader). The reconciler's stages under reconciler/internal take
// these; the wiring point (cmd/blacksmith) hands them *bosh.Client,
// *broker.Broker, *notify.Notifier and *cf.Client, and checks those
// against them.
//
// It declares interfaces and one struct only: it must not import any
// package of the reconciler, do I/O or keep state.
package ports
