// Generated from openapi.json by `npm run generate`; do not edit.

export interface paths {
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description The Prometheus text format (0.0.4), or the OpenMetrics text format (1.0.0) when the Accept header rates `application/openmetrics-text` above `text/plain`, as Prometheus does. With tracing on, OpenMetrics adds exemplars to the `http_request_duration_seconds` buckets: the `trace_id` and `span_id` of the latest sampled request in each.
         */
        get: operations["scrapeMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process answers */
        get: operations["checkLiveness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The database answers in time */
        get: operations["checkReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List plants
         * @description Plants by ascending id, a page at a time.
         */
        get: operations["listPlants"];
        put?: never;
        /**
         * Create a plant
         * @description Creates a new plant in the store. Sending the same plant again is answered like the first time.
         */
        post: operations["createPlant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a plant */
        get: operations["getPlant"];
        /**
         * Replace a plant
         * @description Replaces the name and tag of an existing plant; a body without tag clears it. Never creates a plant.
         */
        put: operations["replacePlant"];
        post?: never;
        /** Delete a plant */
        delete: operations["deletePlant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the webhook subscriptions
         * @description Subscriptions, oldest first: a page at a time with `limit` or `cursor`, every one without either (as release 1.0.0 answered).
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Subscribe a URL to new plants
         * @description Every plant created from now on is POSTed to the URL as a NewPlant, signed as Standard Webhooks says. The answer holds the signing secret, shown this once.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a webhook subscription */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Unsubscribe
         * @description Deliveries not sent yet are dropped.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a subscription disabled for failing
         * @description A subscription whose every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default) is disabled: it is sent nothing, and its pending deliveries are failed. This sends it the plants created from now on again, and starts its failure window afresh; redeliver then sends the failed deliveries. Enabling an enabled subscription changes nothing.
         */
        post: operations["enableWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give a subscription a new signing secret
         * @description The answer holds the new secret, shown this once. Until the overlap ends (overlapSeconds, 86400 s by default, at most 604800), every delivery carries two signatures in webhook-signature, space-separated as Standard Webhooks says: one with the new secret, one with the previous; a receiver holding either verifies it. After it, only the new one. Rotating again during an overlap retires the oldest secret at once.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send failed deliveries again
         * @description Deliveries that used up their attempts are sent again, each from a first attempt, with the same webhook-id. Deliveries are kept for WEBHOOK_DELIVERY_RETENTION (30 days by default) from their plant's creation: a failed one older than that is gone, and is not sent again.
         */
        post: operations["redeliverWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "/plant/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * New plant
         * @description Information about a new plant added to the store, sent once per new plant (never for a replay or a conflict) to every subscription, at least once: receivers drop repeats by webhook-id.
         */
        post: operations["newPlantWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description Every error the service answers, whatever raised it */
        Error: {
            /**
             * Format: int32
             * @description The HTTP status code
             */
            error: number;
            /** @description What went wrong, for a person */
            message: string;
        };
        NewPlant: {
            /** @description The name of the plant (no U+0000) */
            name: string;
            /** @description Tag to specify the type; "" is a tag, distinct from none (no U+0000) */
            tag?: string;
            /**
             * Format: int64
             * @description Identification number of the plant
             */
            id: bigint;
        };
        Plant: {
            /** @description The name of the plant (no U+0000) */
            name: string;
            /** @description Tag to specify the type; "" is a tag, distinct from none (no U+0000) */
            tag?: string;
        };
        StoredPlant: {
            /** @description The name of the plant (no U+0000) */
            name: string;
            /** @description Tag to specify the type; "" is a tag, distinct from none (no U+0000) */
            tag?: string;
            /**
             * Format: int64
             * @description Identification number of the plant
             */
            id: bigint;
        };
        PlantReplacement: {
            /** @description The name of the plant (no U+0000) */
            name: string;
            /** @description Tag to specify the type; "" is a tag, distinct from none (no U+0000) */
            tag?: string;
            /**
             * Format: int64
             * @description The id of the path, repeated; any other id is refused
             */
            id?: bigint;
        };
        NewWebhook: {
            /**
             * Format: uri
             * @description Where every new plant is POSTed: an http or https URL on a public address (no user name or password in it)
             * @example https://hooks.example.com/plant-store
             */
            url: string;
            /** @description What the subscription is for, for people (no U+0000) */
            description?: string;
        };
        CreatedWebhook: {
            /** Format: uuid */
            id: string;
            /**
             * Format: uri
             * @description Where new plants are POSTed
             */
            url: string;
            /** @description Absent when none was given */
            description?: string;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description When a delivery was last attempted; null before the first
             */
            lastAttemptAt: string | null;
            /**
             * Format: int32
             * @description The receiver's HTTP status at the last attempt; null when it did not answer
             */
            lastStatus: number | null;
            /** @description Why the last attempt got no answer (time-out, refused address…); null otherwise */
            lastError: string | null;
            /**
             * Format: int32
             * @description Attempts that failed since the last success
             */
            failuresInARow: number;
            /**
             * Format: date-time
             * @description The first failed attempt since the last success (or since it was enabled); null when the last attempt succeeded
             */
            failingSince: string | null;
            /** @description false once every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default): nothing is sent to it until POST /webhooks/{id}/enable */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled for failing; null while enabled
             */
            disabledAt: string | null;
            /** @description The Standard Webhooks signing secret (`whsec_` and base64): shown once, keep it to verify deliveries */
            secret: string;
        };
        Webhook: {
            /** Format: uuid */
            id: string;
            /**
             * Format: uri
             * @description Where new plants are POSTed
             */
            url: string;
            /** @description Absent when none was given */
            description?: string;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description When a delivery was last attempted; null before the first
             */
            lastAttemptAt: string | null;
            /**
             * Format: int32
             * @description The receiver's HTTP status at the last attempt; null when it did not answer
             */
            lastStatus: number | null;
            /** @description Why the last attempt got no answer (time-out, refused address…); null otherwise */
            lastError: string | null;
            /**
             * Format: int32
             * @description Attempts that failed since the last success
             */
            failuresInARow: number;
            /**
             * Format: date-time
             * @description The first failed attempt since the last success (or since it was enabled); null when the last attempt succeeded
             */
            failingSince: string | null;
            /** @description false once every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default): nothing is sent to it until POST /webhooks/{id}/enable */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled for failing; null while enabled
             */
            disabledAt: string | null;
        };
        SecretRotation: {
            /**
             * Format: int32
             * @description How long the previous secret still signs deliveries, beside the new one, in seconds: 86400 (a day) when left out; 0 retires it at once
             */
            overlapSeconds?: number;
        };
        RotatedWebhook: {
            /** Format: uuid */
            id: string;
            /**
             * Format: uri
             * @description Where new plants are POSTed
             */
            url: string;
            /** @description Absent when none was given */
            description?: string;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description When a delivery was last attempted; null before the first
             */
            lastAttemptAt: string | null;
            /**
             * Format: int32
             * @description The receiver's HTTP status at the last attempt; null when it did not answer
             */
            lastStatus: number | null;
            /** @description Why the last attempt got no answer (time-out, refused address…); null otherwise */
            lastError: string | null;
            /**
             * Format: int32
             * @description Attempts that failed since the last success
             */
            failuresInARow: number;
            /**
             * Format: date-time
             * @description The first failed attempt since the last success (or since it was enabled); null when the last attempt succeeded
             */
            failingSince: string | null;
            /** @description false once every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default): nothing is sent to it until POST /webhooks/{id}/enable */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled for failing; null while enabled
             */
            disabledAt: string | null;
            /** @description The Standard Webhooks signing secret (`whsec_` and base64): shown once, keep it to verify deliveries */
            secret: string;
            /**
             * Format: date-time
             * @description Until when deliveries are signed with the previous secret too; null when it was retired at once (an overlap of 0)
             */
            previousSecretExpiresAt: string | null;
        };
        Redelivery: {
            /**
             * Format: int32
             * @description Failed deliveries sent again from a first attempt
             */
            redelivered: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    scrapeMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics, in the format the Accept header prefers */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                    "application/openmetrics-text": string;
                };
            };
            /** @description This client address sent too many requests */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkLiveness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                        /**
                         * @description The semantic version it runs
                         * @example 1.0.0
                         */
                        version: string;
                        /**
                         * @description The git commit it was built from, or `unknown`
                         * @example 9f4213a0c5d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5
                         */
                        revision: string;
                    };
                };
            };
        };
    };
    checkReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready to serve requests */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok" | "shutting_down";
                        /**
                         * @description The semantic version it runs
                         * @example 1.0.0
                         */
                        version: string;
                        /**
                         * @description The git commit it was built from, or `unknown`
                         * @example 9f4213a0c5d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5
                         */
                        revision: string;
                        info?: Record<string, never>;
                        error?: Record<string, never>;
                        details?: Record<string, never>;
                    };
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPlants: {
        parameters: {
            query?: {
                /** @description How many items a page holds at most */
                limit?: number;
                /** @description Where the page starts: copy it from the `Link: <…>; rel="next"` header of the previous page */
                cursor?: string;
                /** @description Only plants with exactly this tag (`tag=` selects the empty tag) */
                tag?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of plants */
            200: {
                headers: {
                    /** @description The next page (RFC 8288); absent on the last page */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"][];
                };
            };
            /** @description limit, tag or cursor is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope plants:read */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPlant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description Plant response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plant"];
                };
            };
            /** @description The body is not a valid NewPlant */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope plants:write */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A plant with this id exists with another name or tag */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Identification number of the plant */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plant */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The id is not an int64 */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope plants:read */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no plant with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    replacePlant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Identification number of the plant */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlantReplacement"];
            };
        };
        responses: {
            /** @description The plant as replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPlant"];
                };
            };
            /** @description The id or the body is invalid, or the body has another id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope plants:write */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no plant with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePlant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Identification number of the plant */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plant is deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The id is not an int64, or the request has a body that is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope plants:write */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no plant with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Where the page starts: copy it from the `Link: <…>; rel="next"` header of the previous page */
                cursor?: string;
                /** @description How many subscriptions a page holds at most (20 when only `cursor` is given). Without `limit` and `cursor`, every subscription comes in one answer. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of subscriptions, with their delivery status */
            200: {
                headers: {
                    /** @description The next page (RFC 8288); absent on the last page */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"][];
                };
            };
            /** @description limit or cursor is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            /** @description The subscription and its secret */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedWebhook"];
                };
            };
            /** @description The body is invalid, or the URL is not http(s), carries credentials, names port 0, does not resolve, or resolves to a loopback, private or link-local address (as IPv4 or embedded in IPv6) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription with its delivery status */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The id is not a UUID, or the request has a body that is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no webhook with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription is deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The id is not a UUID, or the request has a body that is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no webhook with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    enableWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription, enabled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The id is not a UUID, or the request has a body that is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no webhook with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["SecretRotation"];
            };
        };
        responses: {
            /** @description The subscription and its new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedWebhook"];
                };
            };
            /** @description The id is not a UUID, or the body is not a JSON object, or overlapSeconds is not an integer within its bounds */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no webhook with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redeliverWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How many deliveries are queued again */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Redelivery"];
                };
            };
            /** @description The id is not a UUID, or the request has a body that is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No valid bearer token: missing, malformed, unknown, expired or revoked */
            401: {
                headers: {
                    /** @description The bearer challenge (RFC 6750) */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope webhooks:manage */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description There is no webhook with this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is larger than 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description This token sent too many requests; retry later */
            429: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The service failed unexpectedly */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unreachable or too slow; retry later */
            503: {
                headers: {
                    /** @description Seconds to wait before the next request */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    newPlantWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description The message: one per plant and subscription, the same in every attempt */
                "webhook-id": string;
                /** @description When this attempt was signed, in Unix seconds */
                "webhook-timestamp": string;
                /** @description Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the subscription secret */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description Information about a new plant added to the store */
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description Return a 200 status to indicate that the data was received successfully (any 2xx is taken so); anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
