/**
 * Cloud metadata and credential services, denied by default on every outbound target (OUTBOUND_ALLOW naming
 * the exact entry reopens it). Each entry cites where it is documented; docs/security.md renders this table.
 * Link-local (169.254.0.0/16, fe80::/10) is denied as a whole, which covers most providers' 169.254.169.254;
 * the entries below are the ones outside it, plus the names that resolve to these services.
 */

export interface MetadataEntry {
  /** A CIDR, or a host name. */
  target: string;
  provider: string;
  service: string;
  source: string;
  /** Documented by the provider itself, or only by public SSRF lists. */
  confidence: "provider" | "third-party" | "unconfirmed";
}

export const METADATA_ENTRIES: readonly MetadataEntry[] = [
  {
    target: "169.254.0.0/16",
    provider: "AWS, GCP, Azure, OCI, DigitalOcean, Hetzner, Linode, OpenStack, IBM, Vultr, Huawei, Scaleway, Tencent",
    service:
      "IPv4 link-local: 169.254.169.254 (IMDS), 169.254.169.253 (AWS DNS), 169.254.170.2 (ECS credentials), 169.254.170.23 (EKS Pod Identity), 169.254.42.42 (Scaleway)",
    source: "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html",
    confidence: "provider",
  },
  {
    target: "fe80::/10",
    provider: "OpenStack",
    service: "IPv6 link-local: fe80::a9fe:a9fe (Neutron metadata)",
    source: "https://specs.openstack.org/openstack/neutron-specs/specs/ussuri/metadata-add-ipv6-support.html",
    confidence: "provider",
  },
  {
    target: "fd00:ec2::254/128",
    provider: "AWS",
    service: "IMDS over IPv6",
    source: "https://docs.aws.amazon.com/linux/al2023/ug/imdsv2.html",
    confidence: "provider",
  },
  {
    target: "fd00:ec2::253/128",
    provider: "AWS",
    service: "Route 53 Resolver (Amazon DNS) over IPv6",
    source: "https://docs.aws.amazon.com/vpc/latest/userguide/AmazonDNS-concepts.html",
    confidence: "provider",
  },
  {
    target: "fd00:ec2::123/128",
    provider: "AWS",
    service: "Time Sync Service over IPv6",
    source: "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configure-ec2-ntp.html",
    confidence: "provider",
  },
  {
    target: "fd00:ec2::23/128",
    provider: "AWS",
    service: "EKS Pod Identity Agent over IPv6 (IAM credentials for pods)",
    source: "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html",
    confidence: "provider",
  },
  {
    target: "168.63.129.16/32",
    provider: "Azure",
    service: "WireServer / host node (VM agent, DHCP, DNS, health probes)",
    source: "https://learn.microsoft.com/en-us/azure/virtual-network/what-is-ip-address-168-63-129-16",
    confidence: "provider",
  },
  {
    target: "192.0.0.192/32",
    provider: "Oracle Cloud at Customer / Classic",
    service: "instance metadata",
    source:
      "https://docs.oracle.com/en/cloud/cloud-at-customer/occ-get-started/retrieve-predefined-instance-metadata.html",
    confidence: "provider",
  },
  {
    target: "100.100.100.200/32",
    provider: "Alibaba Cloud",
    service: "ECS instance metadata (RAM role credentials)",
    source: "https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata",
    confidence: "provider",
  },
  {
    target: "100.96.0.96/32",
    provider: "Volcengine / BytePlus",
    service: "ECS instance metadata",
    source: "https://docs.byteplus.com/en/docs/ecs/Viewing-instance-metadata",
    confidence: "provider",
  },
  {
    target: "fd00:a9fe:a9fe::1/128",
    provider: "Akamai / Linode",
    service: "metadata service over IPv6",
    source: "https://docs.cloud-init.io/en/latest/reference/datasources/akamai.html",
    confidence: "provider",
  },
  {
    target: "fd00:42::42/128",
    provider: "Scaleway",
    service: "instance metadata over IPv6",
    source: "https://www.scaleway.com/en/developers/api/instance/user-data",
    confidence: "provider",
  },
  {
    target: "fd20:ce::254/128",
    provider: "GCP",
    service: "IPv6 metadata server (as public SSRF deny lists give it)",
    source: "public SSRF deny lists; no Google page found (Google documents 169.254.169.254 only)",
    confidence: "unconfirmed",
  },
  {
    target: "metadata.google.internal",
    provider: "GCP",
    service: "metadata server",
    source: "https://cloud.google.com/compute/docs/metadata/querying-metadata",
    confidence: "provider",
  },
  {
    target: "metadata",
    provider: "GCP",
    service: "metadata server (short name, completed by the google.internal search domain)",
    source: "https://cloud.google.com/compute/docs/metadata/querying-metadata",
    confidence: "provider",
  },
  {
    target: "metadata.goog",
    provider: "GCP",
    service: "metadata server (alias listed by SSRF lists)",
    source: "public SSRF deny lists; no Google page found",
    confidence: "unconfirmed",
  },
  {
    target: "instance-data",
    provider: "AWS",
    service: "IMDS alias through Amazon DNS (undocumented)",
    source: "https://github.com/canonical/cloud-init/issues/2285",
    confidence: "third-party",
  },
  {
    target: "instance-data.ec2.internal",
    provider: "AWS",
    service: "IMDS alias through Amazon DNS (undocumented)",
    source: "https://github.com/canonical/cloud-init/issues/2285",
    confidence: "third-party",
  },
  {
    target: "metadata.tencentyun.com",
    provider: "Tencent Cloud",
    service: "CVM instance metadata",
    source: "https://github.com/TencentCloud/kubernetes-csi-tencentcloud/issues/146",
    confidence: "third-party",
  },
  {
    target: "api.metadata.cloud.ibm.com",
    provider: "IBM Cloud",
    service: "VPC instance metadata and identity tokens",
    source: "https://cloud.ibm.com/apidocs/vpc-metadata",
    confidence: "provider",
  },
  {
    target: "global.cloudinit.sdns.ksyun.com",
    provider: "Kingsoft Cloud",
    service: "instance metadata",
    source: "https://endocs.ksyun.com/documents/7200",
    confidence: "provider",
  },
];

/** Other ranges nothing should probe: unspecified, multicast, broadcast, NAT64 local-use. */
export const UNROUTABLE = [
  "0.0.0.0/8",
  "::/128",
  "224.0.0.0/4",
  "ff00::/8",
  "255.255.255.255/32",
  // NAT64 local-use prefix: the IPv4 inside sits at a prefix-dependent offset, so refuse the whole range.
  "64:ff9b:1::/48",
];

/** The table for docs/security.md, generated so the docs and the policy cannot disagree. */
export function renderMetadataTable(): string {
  const rows = METADATA_ENTRIES.map(
    (e) =>
      `| \`${e.target}\` | ${e.provider} | ${e.service} | ${e.confidence} | ${e.source.startsWith("http") ? `<${e.source}>` : e.source} |`,
  );
  return ["| target | provider | service | documented by | source |", "| --- | --- | --- | --- | --- |", ...rows].join(
    "\n",
  );
}
