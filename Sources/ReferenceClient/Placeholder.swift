// ReferenceClient
