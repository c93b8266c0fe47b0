# workerd config; run.sh overrides the address with --socket-addr http=127.0.0.1:PORT.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .benchWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8080", http = (), service = "main") ],
);

const benchWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "workerd-worker.js") ],
  compatibilityDate = "2024-09-23",
);
