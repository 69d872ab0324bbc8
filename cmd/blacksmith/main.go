// Command blacksmith is the broker-side daemon: the Open Service Broker API
// that creates service instances on a BOSH Director, the reconciler that
// keeps their records in Vault true, and the operators' HTTP endpoints.
//
//	blacksmith [serve] -c FILE                    run the daemon (default)
//	blacksmith check-config -c FILE               validate a configuration, print it redacted
//	blacksmith reconcile [--dry-run] -c FILE      one reconciler run, its summary as JSON
//	blacksmith backups -c FILE INSTANCE           an instance's backups, newest first
//	blacksmith restore -c FILE INSTANCE [BACKUP]  an instance's records put back from a backup
//	blacksmith rebuild-index -c FILE              the index rebuilt from BOSH and the instances' documents
//	blacksmith adopt -c FILE INSTANCE             an adoption confirmed
//	blacksmith upgrade-all [--dry-run] -c FILE    one fleet upgrade, its table
//	blacksmith allow-changes -c FILE INSTANCE CLASSES  guarded changes let through for a while
//	blacksmith orphan-deployments -c FILE         the deployments the platform has no instance of (exit 10)
//	blacksmith register-broker -c FILE            the broker registered in CF, its plans' service access set
//	blacksmith deregister-broker -c FILE          the broker deregistered from CF (refused while instances exist)
//	blacksmith recreate-all [--dry-run] -c FILE   every instance's VMs recreated, canaries first
//	blacksmith delete-all-service-instances -c FILE  every instance deleted through CF (needs a flag)
//	blacksmith export-legacy [--apply] -c FILE    the legacy Blacksmith db written back (the way back)
//	blacksmith version                            print the version
//
// `blacksmith help` prints each with its flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv))
}

// run runs the subcommand args name and returns the process's exit code.
func run(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	switch name {
	case "serve":
		return serveCommand(args, stderr, env)
	case "check-config":
		return checkConfigCommand(args, stdout, stderr, env)
	case "reconcile":
		return reconcileCommand(args, stdout, stderr, env)
	case "backups":
		return backupsCommand(args, stdout, stderr, env)
	case "restore":
		return restoreCommand(args, stdout, stderr, env)
	case "rebuild-index":
		return rebuildIndexCommand(args, stdout, stderr, env)
	case "adopt":
		return adoptCommand(args, stdout, stderr, env)
	case "upgrade-all":
		return upgradeAllCommand(args, stdout, stderr, env)
	case "allow-changes":
		return allowChangesCommand(args, stdout, stderr, env)
	case "orphan-deployments":
		return orphanDeploymentsCommand(args, stdout, stderr, env)
	case "register-broker":
		return registerBrokerCommand(args, stdout, stderr, env)
	case "deregister-broker":
		return deregisterBrokerCommand(args, stdout, stderr, env)
	case "recreate-all":
		return recreateAllCommand(args, stdout, stderr, env)
	case "delete-all-service-instances":
		return deleteAllCommand(args, stdout, stderr, env)
	case "export-legacy":
		return exportLegacyCommand(args, stdout, stderr, env)
	case "version":
		fmt.Fprintf(stdout, "blacksmith %s\n", version)
		return exitOK
	case "help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "blacksmith: unknown command %q\n", name)
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  blacksmith [serve] -c FILE                run the daemon
  blacksmith check-config -c FILE           check a configuration file
  blacksmith reconcile [--dry-run] [--service ID] [--plan ID] [--deployment NAME] [--instance ID] -c FILE
                                            make one reconciler run (over that scope), print its summary
  blacksmith backups -c FILE INSTANCE       list an instance's backups, newest first
  blacksmith restore [--redeploy] -c FILE INSTANCE [BACKUP]
                                            put an instance's records back from a backup
                                            (default the newest; the current state is backed up first;
                                            --redeploy: deploy the backup's manifest to BOSH first)
  blacksmith rebuild-index [--dry-run|--apply] -c FILE
                                            rebuild the instance index from BOSH and the
                                            instances' own documents (default: dry run)
  blacksmith adopt -c FILE INSTANCE         confirm an instance the reconciler adopted from a
                                            Director: the broker binds, updates and deletes it
  blacksmith upgrade-all [--dry-run] [--canaries N] [--max-in-flight N] [--max-failures N]
                         [--attempt-limit N] [--service S] [--plan P] [--director D]
                         [--instance ID]... [--allow CLASSES] [--json] -c FILE
                                            upgrade the instances behind their plan's version, canaries
                                            first; exit 0 only when every one in scope is current
  blacksmith allow-changes [--for DURATION] -c FILE INSTANCE CLASSES
                                            let the instance's next operations make the guarded changes
                                            of CLASSES (network,az,errand,instance-group,job,disk,
                                            instances,variable,secret) for DURATION (default 1h)
  blacksmith orphan-deployments [--json] -c FILE
                                            list the deployments whose instance the platform (cf) does
                                            not have; exit 10 when there are some, 0 when none, 1 when
                                            the platform, a Director or Vault could not be read
  blacksmith register-broker --broker-url URL [--access PLAN=all|none]... [--org PLAN=ORG]...
                             [--default-access all|none|keep] [CF FLAGS] -c FILE
                                            register the broker in CF (create, or update its URL,
                                            credentials and catalog), then set each plan's service
                                            access; a second run changes nothing and says so
  blacksmith deregister-broker [CF FLAGS] -c FILE
                                            deregister the broker from CF; refused while instances
                                            of its plans exist (exit 1, naming them)
  blacksmith recreate-all [--dry-run] [--canaries N] [--max-in-flight N] [--max-failures N]
                          [--service S] [--plan P] [--director D] [--instance ID]... [--json] -c FILE
                                            recreate every VM of every instance's deployment,
                                            canaries first; exit 0 only when every one in scope was
  blacksmith delete-all-service-instances --i-understand-this-deletes-everything [--max-in-flight N]
                                          [CF FLAGS] -c FILE
                                            delete every instance of the broker through CF (each
                                            job waited on); exit 1 naming those not deleted
                                            CF FLAGS: --cf-api URL, --cf-ca-cert FILE,
                                            --cf-skip-ssl-validation, --broker-name NAME, --timeout D
                                            (default the configuration's cf.*); the client is the
                                            errand's own: $BLACKSMITH_ERRAND_CF_CLIENT_ID and _SECRET
  blacksmith export-legacy [--dry-run|--apply] -c FILE
                                            write the legacy Blacksmith index ({mount}/db) from this
                                            one, for going back (default: dry run; the db replaced is
                                            copied first)
  blacksmith version                        print the version
The configuration file defaults to $BLACKSMITH_CONFIG; the environment
overrides it (see docs/configuration.md).
`)
}

// flags parses a subcommand's flags: -c FILE, plus the ones extra adds.
// ok is false when the process must exit with code.
func flags(name string, args []string, stderr io.Writer, env func(string) (string, bool), extra func(*flag.FlagSet)) (path string, code int, ok bool) {
	path, _, code, ok = flagsAndArgs(name, args, stderr, env, extra, 0, 0)
	return path, code, ok
}

// flagsAndArgs is flags for a subcommand that also takes between least and
// most positional arguments, after the flags.
func flagsAndArgs(name string, args []string, stderr io.Writer, env func(string) (string, bool), extra func(*flag.FlagSet), least, most int) (path string, rest []string, code int, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	def, _ := env("BLACKSMITH_CONFIG")
	fs.StringVar(&path, "c", def, "configuration `file` (default $BLACKSMITH_CONFIG)")
	fs.StringVar(&path, "config", def, "configuration `file` (same as -c)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", nil, exitOK, false
		}
		return "", nil, exitUsage, false
	}
	if fs.NArg() < least || fs.NArg() > most {
		fmt.Fprintf(stderr, "blacksmith %s: want %d to %d arguments after the flags, got %q\n", name, least, most, fs.Args())
		return "", nil, exitUsage, false
	}
	return path, fs.Args(), exitOK, true
}
