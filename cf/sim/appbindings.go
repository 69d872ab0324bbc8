package sim

import (
	"net/http"
	"slices"
)

// createApp is POST /v3/service_credential_bindings of type app (`cf
// bind-service`): the app looked up, refused as
// ServiceCredentialBindingAppCreate#precursor refuses (one binding per app
// and instance, max_service_credential_bindings_per_app_service_instance
// 1), then bound as a key is, with the app in the broker's body.
func (kw *keyWrites) createApp(w http.ResponseWriter, m keyMessage, in Instance) {
	app, ok := getApp(kw.f, m.app)
	if !ok {
		kw.refuse(w, "The app could not be found: '"+m.app+"'")
		return
	}
	c, _ := chainOf(kw.f, in.PlanGUID)
	old, exists := appBinding(kw.f, in.GUID, app.GUID)
	if msg := appBindingRefusal(kw.f, in, c, app, m.name, old, exists); msg != "" {
		kw.refuse(w, msg)
		return
	}
	if !exists {
		old.GUID = ""
	}
	if old.GUID != "" { // its bind failed: the broker may hold it (OrphanMitigator#cleanup_failed_bind)
		kw.runner.orphans.unbind(c.broker, in.GUID, old.GUID, c.offering.CatalogID, c.plan.CatalogID)
	}
	kw.bind(w, m, in, c, old.GUID)
}

// appBindingRefusal is CC's reason to refuse an app binding, "" for none.
func appBindingRefusal(f *Foundation, in Instance, c planChain, app App, name string, old Key, exists bool) string {
	lo := old.LastOperation
	switch {
	case app.SpaceGUID != in.SpaceGUID:
		return "The service instance and the app are in different spaces"
	case in.Type != TypeManaged:
		return "Service credential bindings of type 'app' to user-provided service instances are not simulated by cf/sim"
	case !c.plan.Bindable:
		return "Service plan does not allow bindings"
	case createFailed(in.LastOperation):
		return "Service instance not found"
	case inProgress(in):
		return "There is an operation in progress for the service instance"
	case exists && lo.Type == OpCreate && lo.State != StateFailed: // succeeded or in progress, with one binding allowed
		return "The app is already bound to the service instance"
	case exists && lo.Type == OpDelete:
		return "The binding is getting deleted or its deletion failed"
	case name != "" && appBindingNameTaken(f, app.GUID, name, in.GUID):
		return "The binding name is invalid. Binding names must be unique for a given service instance and app. The app already has a binding with name '" +
			name + "'."
	}
	return ""
}

// appBinding is the app's binding to the instance.
func appBinding(f *Foundation, instanceGUID, appGUID string) (Key, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i := slices.IndexFunc(f.keys.list, func(k Key) bool { return k.InstanceGUID == instanceGUID && k.AppGUID == appGUID })
	if i < 0 {
		return Key{}, false
	}
	return f.keys.list[i], true
}

// appBindingNameTaken says whether the app has a binding of that name to another instance.
func appBindingNameTaken(f *Foundation, appGUID, name, instanceGUID string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.ContainsFunc(f.keys.list, func(k Key) bool {
		return k.AppGUID == appGUID && k.Name == name && k.InstanceGUID != instanceGUID
	})
}
