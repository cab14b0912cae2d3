/** @roadnerd/orchestrator — catalog, attach on request, strict reply parsing, planners, triage, JSONL log. */
export {
  type AttachEvent,
  type Attached,
  Attacher,
  type AttacherOptions,
  defaultLaunch,
  type Launch,
} from "./attach.ts";
export { type Catalog, type CatalogEntry, catalogFrom, entryLine, loadCatalog } from "./catalog.ts";
export {
  DEFAULT_ATTACH_TIMEOUT_MS,
  DEFAULT_IDLE_MS,
  DEFAULT_STEP_BUDGET,
  loadOrchestratorConfig,
  type OrchestratorConfig,
} from "./config.ts";
export { AttachError, errorInfo, ORCHESTRATOR_CODES, type OrchestratorCode } from "./errors.ts";
export { isLabel, LABELS, type Label } from "./labels.ts";
export { createOrchestrator, type Orchestrator } from "./orchestrator.ts";
export { type ParsedReply, parseReply, resolveToolName, type ToolCall } from "./parse-reply.ts";
export { buildMessages, type ChatMessage, type OpenAiOptions, OpenAiPlanner } from "./planners/openai.ts";
export type { Planner, PlannerInput, StepRecord } from "./planners/planner.ts";
export { PROFILES, REPAIR_PROMPT, SYSTEM_PROMPT, systemPrompt } from "./planners/prompts.ts";
export { portOf, RulesPlanner, topicOf } from "./planners/rules.ts";
export { ScriptedPlanner } from "./planners/scripted.ts";
export { serverEnv } from "./server-env.ts";
export { newRunId, runTriage, type TriageOptions, type TriageOutcome } from "./triage.ts";
export { createTriageLog, type StepLine, type TriageLog } from "./triage-log.ts";
