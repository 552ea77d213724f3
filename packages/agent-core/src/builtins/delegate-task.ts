/**
 * The `delegate_task` tool: hands a self-contained piece of work to a subagent and returns its final answer.
 * The child starts from a clean slate (no history, a short system prompt of its own, read-only tools only and
 * never delegate_task itself, so it cannot fan out further) and spends the parent's iteration budget: the
 * `IterationBudget` in toolContext is passed down, so delegating never multiplies what one turn may cost, and each
 * child also has a cap of its own (50 iterations by default).
 */
import { runConversation } from '../loop/run-conversation.js';
import { toolHooksOf } from '../loop/tool-hooks.js';
import type { FallbackState } from '../providers/fallback.js';
import type { Provider } from '../providers/types.js';
import type { Tool, ToolContext } from '../tools/registry.js';
import { budgetOf, optionalStringArg, stringArg, turnProvidersOf } from './context.js';

export const DELEGATE_TOOL = 'delegate_task';
/**
 * Subagents one turn may start by default (HERALD_DELEGATE_MAX_PER_TURN); the next one gets an error result. One,
 * as in Hermes: several independent questions go into one task, and fan-out stays an explicit choice.
 */
export const MAX_CHILDREN_PER_TURN = 1;
/** Iterations one subagent may take by default (HERALD_DELEGATE_MAX_ITERATIONS), within the turn's own budget. */
export const DEFAULT_CHILD_MAX_ITERATIONS = 50;
export const CHILD_SYSTEM_PROMPT =
  'You are a subagent working on one task for another assistant, who will read your answer (the user will ' +
  'not). Do the task with the tools you have, then answer with the result: concrete, complete, and short. ' +
  'If you cannot finish, say what you found and what is missing.';

export interface DelegateDeps {
  provider: Provider;
  fallbacks?: Provider[];
  fallbackState?: FallbackState;
  /** The tools of the turn; the child gets the read-only, non-interactive ones. */
  parentTools: () => readonly Tool[];
  /** Subagents per turn; MAX_CHILDREN_PER_TURN when absent. */
  maxPerTurn?: number;
  /** Iterations per subagent; DEFAULT_CHILD_MAX_ITERATIONS when absent. */
  maxIterations?: number;
}

/** The child's toolbox: read-only, nothing that talks to the user, no further delegation. */
export function childToolsOf(tools: readonly Tool[]): Tool[] {
  return tools.filter((t) => t.readOnly && !t.interactive && t.name !== DELEGATE_TOOL);
}

/** Context fields the child must not inherit: its own signal and budget are passed explicitly, its task id is its own. */
const NOT_INHERITED = new Set(['signal', 'budget', 'clarify', 'taskId']);

export function createDelegateTool(deps: DelegateDeps): Tool {
  // Children started per turn, keyed by the turn's budget object (one per turn, shared with its children).
  const started = new WeakMap<object, number>();
  const maxPerTurn = deps.maxPerTurn ?? MAX_CHILDREN_PER_TURN;
  const childIterations = deps.maxIterations ?? DEFAULT_CHILD_MAX_ITERATIONS;
  return {
    name: DELEGATE_TOOL,
    description:
      'Hand a self-contained task to a subagent and get its answer back (for research or lookups you can ' +
      'describe completely, e.g. several independent questions at once). The subagent sees none of this ' +
      'conversation: put everything it needs in "task" and "context". It can only use read-only tools. ' +
      `${maxPerTurn === 1 ? 'One subagent' : `At most ${maxPerTurn} subagents`} per request; their steps count against your own step budget.`,
    parameters: {
      type: 'object',
      properties: {
        task: { type: 'string', description: 'What the subagent should do and what to answer with' },
        context: { type: 'string', description: 'Facts from this conversation the subagent needs' },
      },
      required: ['task'],
    },
    // Children may run side by side with each other and with other read-only tools.
    readOnly: true,
    async execute(args, ctx) {
      const budget = budgetOf(ctx);
      if (!budget) throw new Error("the turn's iteration budget is missing, so no subagent can be started");
      const task = stringArg(args, 'task');
      const context = optionalStringArg(args, 'context');
      if (budget.remaining === 0) throw new Error("no steps are left in this request's budget for a subagent");
      // Counted before the first await, so parallel calls in one batch see each other.
      const count = (started.get(budget) ?? 0) + 1;
      started.set(budget, count);
      if (count > maxPerTurn) {
        throw new Error(`at most ${maxPerTurn} subagents per request, and this would be number ${count}; do this part yourself`);
      }

      const turn = turnProvidersOf(ctx);
      const result = await runConversation({
        userMessage: context ? `${task}\n\nContext:\n${context}` : task,
        history: [],
        systemPrompt: CHILD_SYSTEM_PROMPT,
        signal: ctx.signal,
        provider: turn?.primary ?? deps.provider,
        fallbacks: turn?.fallbacks ?? deps.fallbacks,
        fallbackState: deps.fallbackState,
        tools: childToolsOf(deps.parentTools()),
        // The parent's approvals and audit apply to the child's calls too.
        toolHooks: toolHooksOf(ctx),
        // Its own cap, drawn from the turn's budget: a child never takes more than either allows.
        budget: budget.child(childIterations),
        toolContext: inheritedContext(ctx),
      });
      if (result.interrupted) throw new Error('the subagent was interrupted');
      if (result.error) throw new Error(`the subagent failed (${result.error.kind}): ${result.error.message}`);
      const answer = result.finalResponse.trim() || '(the subagent gave no answer)';
      return result.partial ? `${answer}\n\n[The subagent stopped early: ${result.partial}.]` : answer;
    },
  };
}

function inheritedContext(ctx: ToolContext): Record<string, unknown> {
  return Object.fromEntries(Object.entries(ctx).filter(([key]) => !NOT_INHERITED.has(key)));
}
