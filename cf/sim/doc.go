// Package sim is a Cloud Controller (API v3) simulator: it answers the read
// side of the v3 service routes, and the service broker writes (create,
// update, delete: pollable jobs that fetch a loopback broker's catalog,
// GET /v3/jobs/:guid) and the managed service instance writes (create,
// update, delete: jobs that drive the plan's loopback broker through OSB
// provision, update, deprovision and last_operation polling, every
// Options.PollInterval) and service keys (service_credential_bindings of
// type key: create, get, details, delete, jobs that bind and unbind at the
// instance's broker; an instance's delete unbinds its keys first), apps (a
// name in a space) and their bindings (service_credential_bindings of type
// app), the update's refusals (CC's preflight), purge, orphan mitigation
// (the deprovision or unbind after a provision or bind failed as CC
// mitigates), the read side (service_brokers, service_offerings,
// service_plans, service_instances) and of organizations and spaces with
// the JSON shapes, pagination links, CF error objects and error codes of
// cloudfoundry/cloud_controller_ng (see FACTS.md for each fact and its
// source), behind a built-in UAA token endpoint issuing JWTs (where the
// root document's uaa and login links say), so that a broker-side
// cross-check, and the cf CLI's read commands, run against something that
// behaves like a Cloud Controller. It is the only stand-in for the Cloud
// Controller the project allows. It answers the queries the cf CLI makes for
// cf marketplace, cf services and cf service-access: available, plan
// visibility by space_guids and organization_guids, include and fields[...]
// (the included resources CC's decorators add) and order_by on service
// instances.
//
// In-process:
//
//	cc, err := sim.New(sim.Options{TokenTTL: 2 * time.Second})
//	defer cc.Close()
//	b := cc.Foundation().AddBroker("blacksmith")
//	cc.Foundation().Seed(b.Name, 100)
//	cc.Knobs().SetLatency(20 * time.Millisecond)
//	url := cc.URL()
//
// State is set up in Go through CC.Foundation (AddBroker, AddOffering,
// AddPlan, AddOrg, AddSpace, AddInstance, RemoveInstance, SetLastOperation)
// and read over HTTP. Knobs (latency, token lifetime, failures, rate limit)
// are turned in Go through CC.Knobs or over the unauthenticated admin API
// under /_sim. The binary cmd/cc-sim serves the same from the command line.
package sim
