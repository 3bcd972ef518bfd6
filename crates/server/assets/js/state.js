// What the page keeps: the one mutable state object the views share, imported by each module
// that reads or sets it, and the localStorage keys of what it remembers across reloads.

export const TOKEN_KEY = 'skillrag.token';
export const CONVERSATION_KEY = 'skillrag.conversation';
export const DOCS_SKILL_KEY = 'skillrag.docs-skill';

export const state = {
  skills: [],           // SkillStatus objects from GET /v1/skills: the enabled skills, which every picker offers
  allSkills: [],        // all of them, disabled ones too (the Skills tab)
  skillsWritable: false, // GET /v1/skills says the server takes writes (--allow-writes)
  skillsPolling: null,  // timer of the re-index poll after a skill write
  models: [],           // model ids from GET /v1/models
  conversation: null,   // {id, title} of the conversation shown, null before its first question
  conversations: [],    // summaries from GET /v1/conversations, newest first
  streaming: null,      // AbortController of the answer being streamed
  polling: null,        // timer of the index-job poll (Index tab)
  docs: null,           // GET /v1/skills/{skill}/documents of the skill shown
  docsPolling: null,    // timer of the re-index poll after an upload or delete
  pendingUpload: null,  // files waiting for "Replace" after a name conflict
  docsView: { filter: '', sort: 'name', dir: 1, page: 0 }, // the documents list's filter, order and page
  docsSelected: new Set(), // names of the documents ticked for "Delete selected"
  loaded: false,
};
