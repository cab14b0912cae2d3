/**
 * The generated Kubernetes manifests (deploy/kubernetes/roadnerd.yaml, from the registry like compose) against
 * the Kubernetes API's JSON Schemas, which kubernetes-models ships (offline), and against what we promise:
 * a DaemonSet and a Service per server, host network and PID only where needed, read-only root, dropped
 * capabilities, non-root where possible, /healthz probes, scrape annotations, one NetworkPolicy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { DaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service } from "kubernetes-models/v1/Service";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KUBERNETES_FILE } from "../scripts/lib/kubernetes.ts";

const text = readFileSync(join(REPO_ROOT, KUBERNETES_FILE), "utf8");
const dockerfile = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
const docs: unknown[] = parseAllDocuments(text).map((d) => d.toJS());
const servers = readRegistry();

/** The model of a document's kind, whose validate() checks it against the API schema. */
function model(doc: unknown): { validate(): void } {
  if (DaemonSet.is(doc)) return new DaemonSet(doc);
  if (Service.is(doc)) return new Service(doc);
  if (NetworkPolicy.is(doc)) return new NetworkPolicy(doc);
  if (Namespace.is(doc)) return new Namespace(doc);
  throw new Error(`no schema for ${JSON.stringify(doc).slice(0, 80)}`);
}

const daemonSets = docs.filter(DaemonSet.is).map((d) => new DaemonSet(d));
const services = docs.filter(Service.is);

describe("Kubernetes manifests", () => {
  it("every document is valid against the Kubernetes API schema", () => {
    expect(docs.length).toBe(2 + 2 * servers.length);
    for (const doc of docs) expect(() => model(doc).validate()).not.toThrow();
  });

  it("the schema check can fail: a wrong type and a missing selector are refused", () => {
    const first = structuredClone(docs.find(DaemonSet.is));
    const container = first?.spec?.template.spec?.containers[0];
    if (!first?.spec || !container?.ports?.[0]) throw new Error("no DaemonSet with a port");
    Reflect.set(container.ports[0], "containerPort", "seven thousand");
    expect(() => model(first).validate()).toThrow(/containerPort/);
    const noSelector = structuredClone(docs.find(DaemonSet.is));
    if (noSelector?.spec) Reflect.deleteProperty(noSelector.spec, "selector");
    expect(() => model(noSelector).validate()).toThrow(/selector/);
  });

  it("one DaemonSet and one Service per registered server, on its port, scraped on /metrics", () => {
    expect(daemonSets.map((d) => d.metadata?.name).sort()).toEqual(servers.map((s) => `roadnerd-${s.name}`).sort());
    expect(services.map((d) => d.metadata?.name).sort()).toEqual(servers.map((s) => `roadnerd-${s.name}`).sort());
    for (const s of servers) {
      const ds = daemonSets.find((d) => d.metadata?.name === `roadnerd-${s.name}`);
      const container = ds?.spec?.template.spec?.containers[0];
      expect(container?.ports?.[0]?.containerPort).toBe(s.defaultPort);
      // The image is the Dockerfile stage of the server's name, whose entrypoint runs the server itself.
      expect(container?.image).toBe(`roadnerd-${s.name}:latest`);
      expect(container?.args).toBeUndefined();
      const stage = dockerfile.split(/^FROM /m).find((part) => part.includes(` AS ${s.name}\n`));
      expect(stage, `Dockerfile stage ${s.name}`).toContain(`ENTRYPOINT ["node","${s.entry}"]`);
      expect(ds?.spec?.template.metadata?.annotations).toEqual({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": String(s.defaultPort),
        "prometheus.io/path": "/metrics",
        "prometheus.io/scheme": "https",
      });
    }
  });

  it("host network only for network and ports, host PID only for ports; everything else locked down", () => {
    const where = (pick: (d: DaemonSet) => boolean | undefined) =>
      daemonSets.filter((d) => pick(d) === true).map((d) => d.metadata?.labels?.["app.kubernetes.io/component"]);
    expect(where((d) => d.spec?.template.spec?.hostNetwork).sort()).toEqual(["network", "ports"]);
    expect(where((d) => d.spec?.template.spec?.hostPID)).toEqual(["ports"]);
    expect(where((d) => d.spec?.template.spec?.containers[0]?.securityContext?.runAsNonRoot)).toHaveLength(
      servers.length - 1,
    );
    for (const ds of daemonSets) {
      const pod = ds.spec?.template.spec;
      const c = pod?.containers[0];
      expect(pod?.automountServiceAccountToken).toBe(false);
      expect(c?.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(c?.livenessProbe?.httpGet).toMatchObject({ path: "/healthz", scheme: "HTTPS" });
      expect(c?.readinessProbe?.httpGet).toMatchObject({ path: "/healthz", scheme: "HTTPS" });
      // A pod address is a remote bind: HTTPS from the TLS Secret, never ALLOW_PLAINTEXT (ADR 0031).
      expect(c?.env?.find((e) => e.name === "TLS_CERT_FILE")?.value).toBe("/etc/roadnerd/tls/tls.crt");
      expect(c?.env?.find((e) => e.name === "TLS_KEY_FILE")?.value).toBe("/etc/roadnerd/tls/tls.key");
      expect(c?.env?.some((e) => e.name === "ALLOW_PLAINTEXT")).toBe(false);
      expect(pod?.volumes?.find((v) => v.name === "tls")?.secret?.secretName).toBe("roadnerd-tls");
      expect(ds.spec?.template.metadata?.annotations?.["prometheus.io/scheme"]).toBe("https");
      for (const m of c?.volumeMounts ?? []) if (m.name.startsWith("host-")) expect(m.readOnly).toBe(true);
      // Bound to the pod's address, with the token from the Secret.
      expect(c?.env?.find((e) => e.name === "HOST")?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP");
      expect(c?.env?.find((e) => e.name === "AUTH_TOKEN")?.valueFrom?.secretKeyRef?.name).toBe("roadnerd-auth");
    }
  });

  it("one NetworkPolicy admits Prometheus to every server's port", () => {
    const [policy] = docs.filter(NetworkPolicy.is);
    const ports = policy?.spec?.ingress?.[0]?.ports?.map((p) => p.port);
    expect(ports).toEqual(servers.map((s) => s.defaultPort));
  });
});
