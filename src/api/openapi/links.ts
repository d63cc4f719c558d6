/**
 * OpenAPI `links`: how the id one response returns feeds the operations that take it, so a generator or a
 * stateful fuzzer (schemathesis) can follow a resource from its creation through everything done to it.
 */

export interface ApiLink {
  operationId: string;
  /** Parameter name → runtime expression (`$response.body#/data/id`). */
  parameters: Record<string, string>;
  description: string;
}

/** One link per operation in `targets`, each passing `expression` as the parameter `param`. */
function linksTo(
  targets: readonly string[],
  param: string,
  expression: string,
  what: string,
): Record<string, ApiLink> {
  return Object.fromEntries(
    targets.map((operationId) => [
      operationId.charAt(0).toUpperCase() + operationId.slice(1),
      { operationId, parameters: { [param]: expression }, description: `${what} (${param})` },
    ]),
  );
}

const CREATED_ID = '$response.body#/data/id';

/** What a response holding a new document leads to. */
function documentLinks(what: string): Record<string, ApiLink> {
  return {
    ...linksTo(
      [
        'getDocument',
        'updateDocument',
        'deleteDocument',
        'sendDocument',
        'voidDocument',
        'getDocumentStatus',
        'downloadDocument',
        'rotateDocumentDownload',
      ],
      'id',
      CREATED_ID,
      what,
    ),
    ...linksTo(['listApprovers', 'addApprover'], 'documentId', CREATED_ID, what),
  };
}

/** Operation id → status → its response's links. */
export const RESPONSE_LINKS: Readonly<Record<string, Record<number, Record<string, ApiLink>>>> = {
  createDocument: { 201: documentLinks('The created document') },
  createDocumentFromTemplate: { 201: documentLinks('The document made from the template') },
  createTemplate: {
    201: linksTo(
      ['getTemplate', 'updateTemplate', 'archiveTemplate', 'createDocumentFromTemplate', 'createBulkSend'],
      'id',
      CREATED_ID,
      'The created template',
    ),
  },
  createBulkSend: {
    201: linksTo(
      ['getBulkSend', 'listBulkSendRows', 'cancelBulkSend'],
      'id',
      CREATED_ID,
      'The created bulk send',
    ),
  },
  addApprover: {
    201: linksTo(
      ['getApprover', 'updateApprover', 'deleteApprover', 'getApproverLink', 'remindApprover'],
      'id',
      CREATED_ID,
      'The added approver',
    ),
  },
  createWebhook: {
    201: linksTo(
      [
        'getWebhook',
        'updateWebhook',
        'deleteWebhook',
        'rotateWebhookSecret',
        'testWebhook',
        'listWebhookDeliveries',
      ],
      'id',
      CREATED_ID,
      'The created webhook',
    ),
  },
  testWebhook: {
    200: linksTo(
      ['redeliverWebhookDelivery'],
      'id',
      '$response.body#/data/delivery_id',
      "The test delivery's id",
    ),
  },
  listWebhookDeliveries: {
    200: linksTo(
      ['redeliverWebhookDelivery'],
      'id',
      '$response.body#/data/0/id',
      'The first delivery on the page',
    ),
  },
};
