package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/blacksmith-reconciler/blacksmith/cf"
)

// deregisterBrokerCommand is `blacksmith deregister-broker [errand cf
// flags] -c FILE`: the broker deleted from the Cloud Controller, which
// refuses while instances of its plans exist (CF-ServiceBrokerNotRemovable):
// so does this command, naming how many and some of them, before asking.
// Exit 0 deregistered or not registered, 1 refused (instances exist) or
// the platform could not be reached, 2 bad flags or configuration.
func deregisterBrokerCommand(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	var ecf errandCF
	cfg, log, code, ok := setup("deregister-broker", args, stderr, env, ecf.flags)
	if !ok {
		return code
	}
	client, err := ecf.client(cfg, env, log)
	if err != nil {
		fmt.Fprintf(stderr, "deregister-broker: %v\n", err)
		return exitUsage
	}
	ctx, stop := ecf.context()
	defer stop()
	name := printable(ecf.brokerName)
	b, err := client.ServiceBroker(ctx, ecf.brokerName)
	switch {
	case errors.Is(err, cf.ErrNotFound):
		fmt.Fprintf(stdout, "deregister-broker: service broker %q is not registered: nothing to do\n", name)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "deregister-broker: reading service broker %q: %v\n", name, err)
		return exitError
	}
	_, instances, err := brokerInstances(ctx, client, ecf.brokerName)
	if err != nil {
		fmt.Fprintf(stderr, "deregister-broker: %v\n", err)
		return exitError
	}
	if len(instances) > 0 {
		refuseDeregister(stderr, name, instances)
		return exitError
	}
	err = cf.NewAdmin(client).DeleteServiceBroker(ctx, b.GUID)
	var apiErr *cf.APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Code == cf.CodeBrokerNotRemovable: // an instance made since the look
		fmt.Fprintf(stderr, "deregister-broker: refused: the Cloud Controller will not remove service broker %q while instances of its plans exist (%s); "+
			"delete them first (bosh run-errand delete-all-service-instances)\n", name, apiErr.Detail)
		return exitError
	case err != nil:
		fmt.Fprintf(stderr, "deregister-broker: deleting service broker %q: %v\n", name, err)
		return exitError
	}
	fmt.Fprintf(stdout, "deregister-broker: service broker %q deregistered (it was at %s)\n", name, printable(b.URL))
	return exitOK
}

// refuseDeregister says why nothing was deleted: the instances, up to ten named.
func refuseDeregister(w io.Writer, name string, instances []cf.Instance) {
	fmt.Fprintf(w, "deregister-broker: refused: %d service instance(s) of broker %q exist, and the Cloud Controller removes no broker "+
		"while any does (CF-ServiceBrokerNotRemovable); delete them first (bosh run-errand delete-all-service-instances):\n", len(instances), name)
	for i, in := range instances {
		if i == 10 {
			fmt.Fprintf(w, "  and %d more\n", len(instances)-10)
			break
		}
		fmt.Fprintf(w, "  %s (%s) in org %s, space %s\n", printable(in.Name), printable(in.GUID), orDash(in.OrgName), orDash(in.SpaceName))
	}
}
