package bosh

// Seeds of the fuzz targets: realistic Director answers, copied byte for byte
// from the project's shared Director API fixtures (never read at test time).
const (
	// seedErrorDeploymentNotFound is error_deployment_not_found_404.json: GET /deployments/:name, 404.
	seedErrorDeploymentNotFound = `{"code":70000,"description":"Deployment 'service-instance_does-not-exist' doesn't exist"}
`
	// seedErrorMissingName is error_missing_name_400.json: POST /deployments, 400.
	seedErrorMissingName = `{"code":40001,"description":"Deployment manifest must have a 'name' key"}
`
	// seedErrorTaskNotFound is error_task_not_found_404.json: GET /tasks/:id, 404.
	seedErrorTaskNotFound = `{"code":10000,"description":"Task 999999 not found"}
`
	// seedErrorScope is error_unauthorized_scope_401.json: a token without a bosh scope, 401.
	seedErrorScope = `{"code":600000,"description":"Require one of the scopes: bosh.admin, bosh.<director-uuid>.admin, bosh.read, bosh.<director-uuid>.read"}
`
	// seedInfoBasic is info_basic.json: GET /info of a basic-auth Director.
	seedInfoBasic = `{
  "name": "bosh-lite",
  "uuid": "2daf673a-9755-4b4f-aa6d-3632fbed8012",
  "version": "280.1.10 (00000000)",
  "user": null,
  "cpi": "warden_cpi",
  "stemcell_os": "ubuntu-jammy",
  "stemcell_version": "1.506",
  "user_authentication": {
    "type": "basic",
    "options": {}
  },
  "features": {
    "local_dns": { "status": true, "extras": { "domain_name": "bosh" } },
    "snapshots": { "status": false },
    "config_server": { "status": true, "extras": { "urls": ["https://config-server.bosh.invalid:8844/api/"] } }
  }
}
`
	// seedInfoUAA is info_uaa.json: GET /info of a UAA Director.
	seedInfoUAA = `{
  "name": "prod-director",
  "uuid": "7c4c7d2e-1f0b-4c55-9a6e-0a6a7e2b9c11",
  "version": "282.0.3 (00000000)",
  "user": null,
  "cpi": "vsphere_cpi",
  "stemcell_os": "ubuntu-jammy",
  "stemcell_version": "1.506",
  "user_authentication": {
    "type": "uaa",
    "options": {
      "url": "https://uaa.bosh.invalid:8443",
      "urls": ["https://uaa.bosh.invalid:8443"]
    }
  },
  "features": {
    "local_dns": { "status": true, "extras": { "domain_name": "bosh" } },
    "snapshots": { "status": false },
    "config_server": { "status": true, "extras": { "urls": ["https://config-server.bosh.invalid:8844/api/"] } }
  }
}
`
	// seedVMs is deployment_vms.json: GET /deployments/:name/vms.
	seedVMs = `[
  {
    "agent_id": "c5e7c705-459e-41c0-b640-db32d8dc6e71",
    "cid": "vm-ec974048-3352-4ba4-669d-beab87b16bcb",
    "job": "redis",
    "index": 0,
    "id": "209b96c8-e482-43c7-9f3e-04de9f93c535",
    "az": "z1",
    "ips": ["10.0.16.5"],
    "vm_created_at": "2026-07-01T10:11:12Z",
    "active": true,
    "permanent_nats_credentials": true
  }
]
`
	// seedInstances is deployment_instances.json: GET /deployments/:name/instances.
	seedInstances = `[
  {
    "agent_id": "c5e7c705-459e-41c0-b640-db32d8dc6e71",
    "cid": "vm-ec974048-3352-4ba4-669d-beab87b16bcb",
    "job": "redis",
    "index": 0,
    "id": "209b96c8-e482-43c7-9f3e-04de9f93c535",
    "az": "z1",
    "ips": ["10.0.16.5"],
    "vm_created_at": "2026-07-01T10:11:12Z",
    "expects_vm": true
  },
  {
    "agent_id": null,
    "cid": null,
    "job": "smoke-tests",
    "index": 0,
    "id": "548d6aa0-eb8f-4890-bd3a-e6b526f3aeea",
    "az": "z1",
    "ips": [],
    "vm_created_at": null,
    "expects_vm": false
  }
]
`
	// seedDeployments is deployments.json: GET /deployments.
	seedDeployments = `[
  {
    "name": "cf",
    "teams": [],
    "cloud_config": "latest",
    "stemcells": [ { "name": "bosh-vsphere-esxi-ubuntu-jammy-go_agent", "version": "1.506" } ],
    "releases": [
      { "name": "capi", "version": "1.181.0" },
      { "name": "diego", "version": "2.99.0" }
    ],
    "locked": false
  },
  {
    "name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
    "teams": [],
    "cloud_config": "outdated",
    "stemcells": [ { "name": "bosh-vsphere-esxi-ubuntu-jammy-go_agent", "version": "1.506" } ],
    "releases": [ { "name": "redis", "version": "16.1.0" } ],
    "locked": true
  },
  {
    "name": "redis-small-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    "teams": ["service-team"],
    "cloud_config": "none",
    "stemcells": [],
    "releases": [],
    "locked": false
  }
]
`
	// seedDeploymentsExcluded is deployments_all_excluded.json: GET /deployments, configs, releases and stemcells excluded.
	seedDeploymentsExcluded = `[
  { "name": "cf", "teams": [] },
  { "name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "teams": [] }
]
`
	// seedEvents is task_4711_output_event.ndjson: GET /tasks/:id/output?type=event.
	seedEvents = `{"time":1751364612,"stage":"Preparing deployment","tags":[],"total":1,"task":"Preparing deployment","index":1,"state":"started","progress":0}
{"time":1751364615,"stage":"Preparing deployment","tags":[],"total":1,"task":"Preparing deployment","index":1,"state":"finished","progress":100}
{"time":1751364615,"stage":"Preparing deployment","tags":[],"total":1,"task":"Rendering templates","index":2,"state":"started","progress":0}
{"time":1751364616,"stage":"Preparing deployment","tags":[],"total":1,"task":"Rendering templates","index":2,"state":"finished","progress":100}
{"time":1751364616,"stage":"Preparing package compilation","tags":[],"total":1,"task":"Finding packages to compile","index":1,"state":"started","progress":0}
{"time":1751364616,"stage":"Preparing package compilation","tags":[],"total":1,"task":"Finding packages to compile","index":1,"state":"finished","progress":100}
{"time":1751364616,"stage":"Creating missing vms","tags":[],"total":1,"task":"redis/209b96c8-e482-43c7-9f3e-04de9f93c535 (0)","index":1,"state":"started","progress":0}
{"time":1751364646,"stage":"Creating missing vms","tags":[],"total":1,"task":"redis/209b96c8-e482-43c7-9f3e-04de9f93c535 (0)","index":1,"state":"finished","progress":100}
{"time":1751364616,"stage":"Updating instance","tags":["redis"],"total":1,"task":"redis/209b96c8-e482-43c7-9f3e-04de9f93c535 (0) (canary)","index":1,"state":"started","progress":0}
{"time":1751364900,"stage":"Updating instance","tags":["redis"],"total":1,"task":"redis/209b96c8-e482-43c7-9f3e-04de9f93c535 (0) (canary)","index":1,"state":"finished","progress":100}
`
	// seedEventError is task_event_error_line.json: an error line of a task's event log.
	seedEventError = `{"time": 1751365000, "error": {"code": 100, "message": "Failed to acquire lock for lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b uid: 0e7a3c9d-2b1f-4a6e-9c8d-7f6e5d4c3b2a. Locking task id is 4713, description: 'create deployment'"}}
`
	// seedTaskDone is task_done.json: GET /tasks/:id, done.
	seedTaskDone = `{
  "id": 4711,
  "state": "done",
  "description": "create deployment",
  "timestamp": 1751364900,
  "started_at": 1751364612,
  "result": "/deployments/service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
  "user": "broker-client",
  "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
  "context_id": "reconciler-run-42"
}
`
	// seedTaskError is task_error.json: GET /tasks/:id, error.
	seedTaskError = `{
  "id": 4712,
  "state": "error",
  "description": "delete deployment service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
  "timestamp": 1751365000,
  "started_at": 1751364990,
  "result": "Failed to acquire lock for lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b uid: 0e7a3c9d-2b1f-4a6e-9c8d-7f6e5d4c3b2a. Locking task id is 4713, description: 'create deployment'",
  "user": "broker-client",
  "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
  "context_id": ""
}`
	// seedTaskQueued is task_queued.json: GET /tasks/:id, queued.
	seedTaskQueued = `{
  "id": 4711,
  "state": "queued",
  "description": "create deployment",
  "timestamp": null,
  "started_at": null,
  "result": null,
  "user": "broker-client",
  "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b",
  "context_id": ""
}
`
	// seedTasks is tasks_list.json: GET /tasks.
	seedTasks = `[
  { "id": 4713, "state": "processing", "description": "create deployment", "timestamp": null, "started_at": 1751365100, "result": null, "user": "broker-client", "deployment": "service-instance_aaa", "context_id": "" },
  { "id": 4711, "state": "done", "description": "create deployment", "timestamp": 1751364900, "started_at": 1751364612, "result": "/deployments/service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "user": "broker-client", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context_id": "" }
]
`
	// seedEventPage is events.json: GET /events?deployment=..., newest first.
	seedEventPage = `[
  {"id": "4127", "parent_id": "4126", "timestamp": 1751365000, "user": "broker-client", "action": "delete", "object_type": "deployment", "object_name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "error": "Failed to acquire lock for lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b uid: 0e7a3c9d-2b1f-4a6e-9c8d-7f6e5d4c3b2a. Locking task id is 4713, description: 'create deployment'", "task": "4712", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4126", "timestamp": 1751364990, "user": "broker-client", "action": "delete", "object_type": "deployment", "object_name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4712", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4124", "timestamp": 1751364981, "user": "broker-client", "action": "acquire", "object_type": "lock", "object_name": "lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4713", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4123", "timestamp": 1751364980, "user": "broker-client", "action": "update", "object_type": "deployment", "object_name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4713", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4122", "timestamp": 1751364900, "user": "broker-client", "action": "release", "object_type": "lock", "object_name": "lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4121", "parent_id": "4117", "timestamp": 1751364900, "user": "broker-client", "action": "create", "object_type": "deployment", "object_name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {"before": {}, "after": {"releases": ["redis/16.1.0"], "stemcells": ["bosh-vsphere-esxi-ubuntu-jammy-go_agent/1.506"]}}},
  {"id": "4120", "parent_id": "4119", "timestamp": 1751364880, "user": "broker-client", "action": "create", "object_type": "instance", "object_name": "redis/209b96c8-e482-43c7-9f3e-04de9f93c535", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "instance": "redis/209b96c8-e482-43c7-9f3e-04de9f93c535", "context": {}},
  {"id": "4119", "timestamp": 1751364700, "user": "broker-client", "action": "create", "object_type": "instance", "object_name": "redis/209b96c8-e482-43c7-9f3e-04de9f93c535", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "instance": "redis/209b96c8-e482-43c7-9f3e-04de9f93c535", "context": {"az": "z1"}},
  {"id": "4118", "timestamp": 1751364613, "user": "broker-client", "action": "acquire", "object_type": "lock", "object_name": "lock:deployment:service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}},
  {"id": "4117", "timestamp": 1751364612, "user": "broker-client", "action": "create", "object_type": "deployment", "object_name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "task": "4711", "deployment": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b", "context": {}}
]
`
	// seedVMStatesFull is task_4730_output_result_instances_full.ndjson: a vm-state task's result.
	seedVMStatesFull = `{"vm_cid":"vm-ec974048-3352-4ba4-669d-beab87b16bcb","active":true,"vm_created_at":"2026-07-01T10:11:12Z","cloud_properties":{"cpu":2,"disk":20480,"ram":4096},"disk_cid":"disk-6b5e0b4e-8a3f-4c1d-9e2b-7f6a5d4c3b2a","disk_cids":["disk-6b5e0b4e-8a3f-4c1d-9e2b-7f6a5d4c3b2a"],"ips":["10.0.16.5"],"agent_id":"c5e7c705-459e-41c0-b640-db32d8dc6e71","job_name":"redis","index":0,"job_state":"running","state":"started","vm_type":"small","vitals":{"cpu":{"sys":"1.3","user":"4.9","wait":"0.1"},"disk":{"ephemeral":{"inode_percent":"0","percent":"0"},"persistent":{"inode_percent":"0","percent":"67"},"system":{"inode_percent":"34","percent":"48"}},"load":["0.00","0.03","0.05"],"mem":{"kb":"227028","percent":"6"},"swap":{"kb":"25972","percent":"1"},"uptime":{"secs":48307}},"processes":[{"name":"redis","state":"running","uptime":{"secs":48210},"mem":{"kb":489836,"percent":12.1},"cpu":{"total":0.3}}],"az":"z1","id":"209b96c8-e482-43c7-9f3e-04de9f93c535","bootstrap":true,"ignore":false,"stemcell":{"name":"bosh-vsphere-esxi-ubuntu-jammy-go_agent","version":"1.506","api_version":3}}
{"vm_cid":null,"active":null,"vm_created_at":null,"cloud_properties":{"cpu":2,"disk":20480,"ram":4096},"disk_cid":null,"disk_cids":[],"ips":[],"agent_id":null,"job_name":"smoke-tests","index":0,"job_state":null,"state":"started","vm_type":"small","vitals":null,"processes":[],"az":"z1","id":"548d6aa0-eb8f-4890-bd3a-e6b526f3aeea","bootstrap":true,"ignore":false,"stemcell":{"name":null,"version":null,"api_version":null}}
`
	// seedReleases is releases.json: GET /releases.
	seedReleases = `[
  {
    "name": "redis",
    "release_versions": [
      { "version": "16.0.0", "commit_hash": "4c36884a", "uncommitted_changes": false, "currently_deployed": false, "job_names": ["redis", "smoke-tests"] },
      { "version": "16.1.0", "commit_hash": "e5416248", "uncommitted_changes": false, "currently_deployed": true, "job_names": ["redis", "smoke-tests"] }
    ]
  }
]
`
	// seedStemcells is stemcells.json: GET /stemcells.
	seedStemcells = `[
  {
    "name": "bosh-vsphere-esxi-ubuntu-jammy-go_agent",
    "operating_system": "ubuntu-jammy",
    "version": "1.506",
    "cid": "sc-c3705a0d-0dd3-4b67-52b5-50533a432244",
    "cpi": "",
    "deployments": [ { "name": "cf" }, { "name": "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b" } ],
    "api_version": 3,
    "id": 12
  }
]
`
)
