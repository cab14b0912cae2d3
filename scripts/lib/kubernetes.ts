/**
 * Kubernetes manifests from the server registry, like compose (generated.ts): a namespace, one DaemonSet per
 * server (every node is a machine to diagnose), a Service each, one NetworkPolicy, and Prometheus scrape
 * annotations. What a server needs from its node comes from its `roadnerd.compose` keys (pid: host, volumes,
 * user, cap_add, tmpfs, environment); host network only for the servers that diagnose the node's own network.
 * Checked against the Kubernetes API schemas in test/kubernetes.test.ts.
 */
import type { RegisteredServer } from "@roadnerd/registry";
import { stringify } from "yaml";
import { z } from "zod";

export const KUBERNETES_FILE = "deploy/kubernetes/roadnerd.yaml";
export const NAMESPACE = "roadnerd";
/** The Secret (key `token`) the operator creates: every server requires the token off loopback. */
export const AUTH_SECRET = "roadnerd-auth";
/** A kubernetes.io/tls Secret (tls.crt, tls.key): every server serves HTTPS, its token never crosses in clear. */
export const TLS_SECRET = "roadnerd-tls";
const TLS_DIR = "/etc/roadnerd/tls";
/**
 * One image per server, each the Dockerfile stage of its name (`docker build --target <name> -t
 * roadnerd-<name> .`), whose entrypoint runs the server: the Dockerfile's last stage is the gateway alone.
 */
export const imageOf = (name: string) => `roadnerd-${name}:latest`;

/**
 * Servers that must see the node's network namespace: network (its interfaces, routes and resolver) and ports
 * (/proc/net lists the sockets of the reader's namespace). The others use the pod network.
 */
const HOST_NETWORK = new Set(["network", "ports"]);
/** The image's `node` user. */
const NODE_UID = 1000;

const composeExtras = z.looseObject({
  pid: z.literal("host").optional(),
  user: z.string().optional(),
  cap_add: z.array(z.string()).default([]),
  volumes: z.array(z.string()).default([]),
  tmpfs: z.array(z.string()).default([]),
  environment: z.record(z.string(), z.string()).default({}),
});

const labelsOf = (name: string) => ({
  "app.kubernetes.io/name": "roadnerd",
  "app.kubernetes.io/component": name,
});

/** "/host/path:/container/path:ro" → a read-only hostPath volume and its mount. */
function hostPaths(name: string, volumes: readonly string[]) {
  return volumes.map((spec, i) => {
    const [path = "", mountPath = path] = spec.split(":");
    return {
      volume: { name: `host-${i}`, hostPath: { path } },
      mount: { name: `host-${i}`, mountPath, readOnly: true },
      of: name,
    };
  });
}

function daemonSet(s: RegisteredServer): Record<string, unknown> {
  const extras = composeExtras.parse(s.compose);
  const hostNetwork = HOST_NETWORK.has(s.name);
  const root = extras.user === "root";
  const mounts = hostPaths(s.name, extras.volumes);
  const tls = {
    volume: { name: "tls", secret: { secretName: TLS_SECRET, defaultMode: 0o444 } },
    mount: { name: "tls", mountPath: TLS_DIR, readOnly: true },
  };
  const tmpfs = extras.tmpfs.map((mountPath, i) => ({
    volume: { name: `tmp-${i}`, emptyDir: { medium: "Memory", sizeLimit: "256Mi" } },
    mount: { name: `tmp-${i}`, mountPath },
  }));
  // The kubelet probes over HTTPS without verifying the certificate; /healthz needs no token.
  const probe = (periodSeconds: number) => ({
    httpGet: { path: "/healthz", port: "https", scheme: "HTTPS" },
    periodSeconds,
    timeoutSeconds: 3,
  });
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: `roadnerd-${s.name}`, namespace: NAMESPACE, labels: labelsOf(s.name) },
    spec: {
      selector: { matchLabels: labelsOf(s.name) },
      template: {
        metadata: {
          labels: labelsOf(s.name),
          annotations: {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": String(s.defaultPort),
            "prometheus.io/path": "/metrics",
            "prometheus.io/scheme": "https",
          },
        },
        spec: {
          ...(hostNetwork ? { hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" } : {}),
          ...(extras.pid === "host" ? { hostPID: true } : {}),
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: { seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: s.name,
              image: imageOf(s.name),
              imagePullPolicy: "IfNotPresent",
              ports: [{ name: "https", containerPort: s.defaultPort, protocol: "TCP" }],
              env: [
                // The pod's own address (the node's, on the host network): never every interface.
                { name: "HOST", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
                { name: "PORT", value: String(s.defaultPort) },
                { name: "LOG_LEVEL", value: "info" },
                { name: "AUTH_TOKEN", valueFrom: { secretKeyRef: { name: AUTH_SECRET, key: "token" } } },
                // A remote bind needs TLS (ADR 0031): the certificate and key from the TLS Secret.
                { name: "TLS_CERT_FILE", value: `${TLS_DIR}/tls.crt` },
                { name: "TLS_KEY_FILE", value: `${TLS_DIR}/tls.key` },
                ...Object.entries(extras.environment).map(([name, value]) => ({ name, value })),
              ],
              securityContext: {
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                ...(root ? { runAsUser: 0 } : { runAsNonRoot: true, runAsUser: NODE_UID, runAsGroup: NODE_UID }),
                capabilities: { drop: ["ALL"], ...(extras.cap_add.length ? { add: extras.cap_add } : {}) },
              },
              livenessProbe: probe(30),
              readinessProbe: probe(10),
              resources: {
                requests: { cpu: "10m", memory: "64Mi" },
                limits: { memory: s.runtime.length ? "1Gi" : "256Mi" },
              },
              volumeMounts: [...mounts, ...tmpfs, tls].map((m) => m.mount),
            },
          ],
          volumes: [...mounts, ...tmpfs, tls].map((m) => m.volume),
        },
      },
    },
  };
}

function service(s: RegisteredServer): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `roadnerd-${s.name}`, namespace: NAMESPACE, labels: labelsOf(s.name) },
    spec: {
      selector: labelsOf(s.name),
      // One endpoint per node: ask a node's own server, not any (internalTrafficPolicy keeps it on the node).
      internalTrafficPolicy: "Local",
      ports: [{ name: "https", port: s.defaultPort, targetPort: "https", protocol: "TCP" }],
    },
  };
}

/** Only Prometheus (pods labelled app.kubernetes.io/name=prometheus, any namespace) reaches the pod-network servers. */
function networkPolicy(servers: readonly RegisteredServer[]): Record<string, unknown> {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "roadnerd-ingress", namespace: NAMESPACE },
    spec: {
      podSelector: { matchLabels: { "app.kubernetes.io/name": "roadnerd" } },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              namespaceSelector: {},
              podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
            },
          ],
          ports: servers.map((s) => ({ protocol: "TCP", port: s.defaultPort })),
        },
      ],
    },
  };
}

/** Every document, in apply order. */
export function kubernetesDocuments(servers: readonly RegisteredServer[]): Array<Record<string, unknown>> {
  const namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: NAMESPACE,
      // Host network, host PID and hostPath mounts are outside the baseline Pod Security level.
      labels: { "pod-security.kubernetes.io/enforce": "privileged" },
    },
  };
  return [namespace, ...servers.flatMap((s) => [daemonSet(s), service(s)]), networkPolicy(servers)];
}

export function kubernetesFile(servers: readonly RegisteredServer[]): string {
  const header = [
    "# Generated by `pnpm generate` from the server registry (servers/*/package.json); edit those, not this.",
    "# Before applying: build and push one image per server to your registry (`docker build --target <name>",
    "# -t <registry>/roadnerd-<name> .`, then `docker push`), set the images below to them (README: sed), and",
    "# create the token:",
    `#   kubectl create namespace ${NAMESPACE}`,
    `#   kubectl -n ${NAMESPACE} create secret generic ${AUTH_SECRET} --from-literal=token=$(openssl rand -hex 16)`,
    "# network and ports use the node's network (and ports its PID namespace): the NetworkPolicy does not cover",
    "# them, their bearer token does. Each server binds only its pod's address.",
    `# They serve HTTPS with the kubernetes.io/tls Secret ${TLS_SECRET} (from your CA or cert-manager; pod addresses`,
    "# change, so give it a fixed DNS name and have clients check that name), so the token never crosses the",
    "# network in clear:",
    `#   kubectl -n ${NAMESPACE} create secret tls ${TLS_SECRET} --cert=roadnerd.crt --key=roadnerd.key`,
  ].join("\n");
  const docs = kubernetesDocuments(servers).map((d) => stringify(d, { lineWidth: 0 }));
  return `${header}\n---\n${docs.join("---\n")}`;
}
