package sim

import (
	"context"
	"encoding/json"
	"net/http"
)

// brokerWrites answers the service broker writes (create, update, delete)
// and the broker get, running the catalog fetches as pollable jobs.
type brokerWrites struct {
	f      *Foundation
	api    *api
	jobs   *jobs
	client *brokerClient
}

func (b *brokerWrites) readBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
		writeError(w, http.StatusBadRequest, cfError{1001, "CF-MessageParseError", "Request invalid due to parse error: invalid request body"})
		return nil, false
	}
	return body, true
}

func (b *brokerWrites) accepted(w http.ResponseWriter, jobGUID string) {
	w.Header().Set("Location", b.api.url+"/v3/jobs/"+jobGUID)
	w.WriteHeader(http.StatusAccepted)
}

// create is POST /v3/service_brokers: the broker SYNCHRONIZING, then a job fetches its catalog.
func (b *brokerWrites) create(w http.ResponseWriter, r *http.Request) {
	body, ok := b.readBody(w, r)
	if !ok {
		return
	}
	m := readBrokerMessage(body, true)
	if len(m.problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(m.problems))
		return
	}
	if m.space != "" && !spaceExists(b.f, m.space) {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Invalid space. Ensure that the space exists and you have access to it."}))
		return
	}
	br := Broker{GUID: newUUID(), Name: m.name, URL: m.url, SpaceGUID: m.space, State: BrokerSynchronizing,
		CreatedAt: now(), UpdatedAt: now(), auth: m.auth}
	if !insertBroker(b.f, br) {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Name must be unique"}))
		return
	}
	b.accepted(w, b.jobs.start("service_broker.catalog.synchronize", brokerLink(b.f, "service_brokers", br.GUID), func(ctx context.Context) *cfError {
		return b.synchronize(ctx, br, BrokerSynchronizationFailed)
	}))
}

// synchronize fetches the broker's catalog and applies it; on failure the
// broker's state becomes failedState.
func (b *brokerWrites) synchronize(ctx context.Context, br Broker, failedState string) *cfError {
	c, err := b.client.fetchCatalog(ctx, br)
	if err != nil {
		changeBroker(b.f, br.GUID, func(x *Broker) { x.State = failedState })
		return err
	}
	applyCatalog(b.f, br.GUID, c)
	changeBroker(b.f, br.GUID, func(x *Broker) { x.State = BrokerAvailable })
	return nil
}

// update is PATCH /v3/service_brokers/:guid: a job when name, url or
// authentication change (the change kept only if the catalog fetch
// succeeds, but for a name alone), else 200 with the broker.
func (b *brokerWrites) update(w http.ResponseWriter, r *http.Request) {
	body, ok := b.readBody(w, r)
	if !ok {
		return
	}
	m := readBrokerMessage(body, false)
	if len(m.problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(m.problems))
		return
	}
	br, ok := getBroker(b.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service broker"))
		return
	}
	if !m.has("name") && !m.has("url") && !m.has("authentication") {
		writeJSON(w, http.StatusOK, b.api.presentBroker(br))
		return
	}
	if m.has("name") && brokerNamed(b.f, m.name, br.GUID) {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Name must be unique"}))
		return
	}
	if br.State == BrokerSynchronizing || br.State == BrokerDeleteInProgress {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Cannot update a broker when other operation is already in progress"}))
		return
	}
	previous := br.State
	changeBroker(b.f, br.GUID, func(x *Broker) { x.State = BrokerSynchronizing })
	b.accepted(w, b.jobs.start("service_broker.update", brokerLink(b.f, "service_brokers", br.GUID), func(ctx context.Context) *cfError {
		return b.applyUpdate(ctx, br, m, previous)
	}))
}

func (b *brokerWrites) applyUpdate(ctx context.Context, br Broker, m brokerMessage, previous string) *cfError {
	next := br
	if m.has("name") {
		next.Name = m.name
	}
	if m.has("url") {
		next.URL = m.url
	}
	if m.has("authentication") {
		next.auth = m.auth
	}
	if m.has("url") || m.has("authentication") {
		c, err := b.client.fetchCatalog(ctx, next)
		if err != nil {
			changeBroker(b.f, br.GUID, func(x *Broker) { x.State = previous })
			return err
		}
		applyCatalog(b.f, br.GUID, c)
	}
	changeBroker(b.f, br.GUID, func(x *Broker) { x.Name, x.URL, x.auth, x.State = next.Name, next.URL, next.auth, BrokerAvailable })
	return nil
}

// destroy is DELETE /v3/service_brokers/:guid: refused while an instance
// uses the broker's plans, else a job removes it with its offerings and plans.
func (b *brokerWrites) destroy(w http.ResponseWriter, r *http.Request) {
	br, ok := getBroker(b.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service broker"))
		return
	}
	if brokerHasInstances(b.f, br.GUID) {
		writeError(w, http.StatusUnprocessableEntity, cfError{270010, "CF-ServiceBrokerNotRemovable",
			"Can not remove brokers that have associated service instances: " + br.Name})
		return
	}
	changeBroker(b.f, br.GUID, func(x *Broker) { x.State = BrokerDeleteInProgress })
	b.accepted(w, b.jobs.start("service_broker.delete", brokerLink(b.f, "service_broker", br.GUID), func(context.Context) *cfError {
		deleteBroker(b.f, br.GUID)
		return nil
	}))
}

// get is GET /v3/service_brokers/:guid.
func (b *brokerWrites) get(w http.ResponseWriter, r *http.Request) {
	br, ok := getBroker(b.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service broker"))
		return
	}
	writeJSON(w, http.StatusOK, b.api.presentBroker(br))
}
